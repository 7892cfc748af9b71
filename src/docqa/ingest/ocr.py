"""OCR for images and PDF pages without a text layer: rapidocr's PP-OCRv6 models, fully offline.

The models ship inside the `rapidocr` wheel (the `ocr` extra: pip install 'docqa[ocr]'); the
engine is given their paths, so it never downloads anything.  Without the extra (or with
`ingest.ocr: off`) readers raise NoTextLayerError with the reason and the install command.

Each recognised line keeps its box on the page (left, top, right, bottom as fractions 0..1 of
the page), recorded in `Document.metadata["ocr"]["lines"]` next to its character span, for a
viewer that highlights where a passage stands on the scan.

Work is bounded: at most `max_pages` pages (or frames) per file are recognised, and none is
started once `budget_s` seconds were spent on the file; the pages left out are listed in the
metadata.  Each page counts in the per-file time limit of the worker that reads it.
"""

from __future__ import annotations

import functools
import importlib.util
import multiprocessing
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from docqa.errors import MissingExtraError
from docqa.types import PAGE

if TYPE_CHECKING:  # Pillow and pypdfium2 are imported when a page is recognised
    from pathlib import Path

    import pypdfium2 as pdfium
    from PIL.Image import Image

    from docqa.ingest.readers.base import TextBuilder

INSTALL = "pip install 'docqa[ocr]'"
ENGINE = "rapidocr 3.10.0, PP-OCRv6 small (det + rec)"
MODELS = {"Det": "PP-OCRv6_det_small.onnx", "Rec": "PP-OCRv6_rec_small.onnx",
          "Cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx"}  # Cls is off; its path keeps it from ever downloading
# Detection runs on the picture scaled so its long side is at most this (recognition still reads
# crops of the picture at up to 2000 px): rapidocr's default ("short side at least 736") blows a
# small picture up sixfold and spends seconds on nothing; 1280 reads 20 px text as well as 2000
# and needs less memory (benchmarks/ocr.py).
_DET_SIDE = 1280
_MAX_RENDER = 2500  # px, long side of a rendered PDF page (an A4 page at 200 DPI is 2339)
_BLANK_RANGE = 24  # a page whose grey levels span less than this holds no ink: not recognised
_PARAGRAPH_GAP = 1.2  # a gap between rows taller than this many row heights starts a paragraph
LINE_FIELDS = ("start", "end", "page", "left", "top", "right", "bottom", "score")


@dataclass(frozen=True, slots=True)
class OcrOptions:
    """What OCR may do; from the settings `ingest.ocr`, `ingest.ocr_dpi`, `ingest.ocr_max_pages`."""

    mode: Literal["auto", "on", "off"] = "auto"
    dpi: int = 200
    max_pages: int = 50
    budget_s: float | None = None  # no new page is started after this many seconds on one file


_options = OcrOptions()


def configure(options: OcrOptions) -> None:
    """Set this process's OCR options (each worker process calls it with the ingest options)."""
    global _options
    _options = options


@functools.cache
def installed() -> bool:
    """True when the OCR engine (the `ocr` extra) is importable; nothing is imported."""
    return importlib.util.find_spec("rapidocr") is not None


def check(options: OcrOptions) -> None:
    """Raise MissingExtraError when OCR is required (`ingest.ocr: on`) but not installed."""
    if options.mode == "on" and not installed():
        raise MissingExtraError("OCR (ingest.ocr: on)", INSTALL)


def unavailable_reason() -> str | None:
    """None when OCR can run here; else why not, saying what to do."""
    if _options.mode == "off":
        return "OCR is off (ingest.ocr: off)"
    if not installed():
        return f"needs OCR: {INSTALL}"
    return None


@dataclass(slots=True)
class OcrLine:
    """One recognised line: its text, its box (fractions of the page) and the engine's confidence."""

    text: str
    box: tuple[float, float, float, float]  # left, top, right, bottom
    score: float


_ENGINE_LOCK = threading.Lock()
_engine: Any = None


def _load_engine() -> Any:
    """The rapidocr engine, built once per process from the model files inside its wheel."""
    global _engine
    with _ENGINE_LOCK:
        if _engine is None:
            from importlib.resources import files

            from rapidocr import RapidOCR

            models = files("rapidocr") / "models"
            params: dict[str, Any] = {f"{k}.model_path": str(models / v) for k, v in MODELS.items()}
            # a worker process shares the cores with its siblings: one thread each
            threads = 1 if multiprocessing.parent_process() is not None else -1
            # no orientation classifier: it turned upright lines over (1 - CER 0.90 against 1.00
            # on the benchmark's 32 px English page); pages scanned upside down are rare
            params.update({"Global.log_level": "warning", "Global.use_cls": False, "Det.limit_type": "max",
                           "Det.limit_side_len": _DET_SIDE,
                           "EngineConfig.onnxruntime.intra_op_num_threads": threads})
            _engine = RapidOCR(params=params)
        return _engine


def recognise(image: Image) -> list[OcrLine]:
    """The lines of text on one image, as the engine found them (`reading_order` sorts them)."""
    image = image.convert("RGB")
    low, high = image.convert("L").getextrema()  # one band: two numbers
    if high - low < _BLANK_RANGE:  # type: ignore[operator]  # (PIL types it for every band count)
        return []
    out = _load_engine()(image)
    if out.boxes is None or out.txts is None:
        return []
    width, height = image.size
    lines = []
    for quad, text, score in zip(out.boxes, out.txts, out.scores):
        text = " ".join(unicodedata.normalize("NFC", str(text)).split())
        if not text:
            continue
        xs, ys = [float(p[0]) for p in quad], [float(p[1]) for p in quad]
        box = (_frac(min(xs), width), _frac(min(ys), height), _frac(max(xs), width), _frac(max(ys), height))
        lines.append(OcrLine(text, box, round(float(score), 3)))
    return lines


def detected_megapixels(path: Path) -> float:
    """Megapixels of a picture as text detection sees them (scaled so its long side is at most _DET_SIDE; each
    frame up to the page cap), read from its header without decoding it; 0 when Pillow cannot open it.  What
    OCR's time follows, with the text on it (benchmarks/RESULTS.md, "repetition, pictures, equal chunks")."""
    import warnings

    try:
        import PIL.Image
    except ImportError:  # no OCR extra: pictures are not read
        return 0.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a decompression-bomb warning: the size is all that is read
            picture = PIL.Image.open(path)
        with picture:
            width, height = picture.size
            frames = min(getattr(picture, "n_frames", 1), _options.max_pages)
    except (OSError, ValueError, SyntaxError, PIL.Image.DecompressionBombError):
        return 0.0
    scale = min(1.0, _DET_SIDE / max(width, height, 1))
    return width * height * scale * scale * frames / 1e6


def _frac(value: float, size: int) -> float:
    return round(min(max(value / size, 0.0), 1.0), 4)


def reading_order(lines: list[OcrLine]) -> list[list[OcrLine]]:
    """Group lines into rows (a line whose middle lies within the row's height joins it), each left to right."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.box[1] + ln.box[3]) / 2):
        middle = (line.box[1] + line.box[3]) / 2
        if rows and rows[-1][0].box[1] <= middle <= rows[-1][0].box[3]:
            rows[-1].append(line)
        else:
            rows.append([line])
    return [sorted(row, key=lambda ln: ln.box[0]) for row in rows]


def page_text(lines: list[OcrLine]) -> tuple[str, list[tuple[int, int, OcrLine]]]:
    """A page's text (a row per line, a blank line at a large gap) and each OCR line's span in it."""
    parts: list[str] = []
    spans: list[tuple[int, int, OcrLine]] = []
    length, bottom = 0, None
    for row in reading_order(lines):
        top, height = min(ln.box[1] for ln in row), max(ln.box[3] - ln.box[1] for ln in row)
        for number, line in enumerate(row):
            sep = " " if number else "" if bottom is None else "\n\n" if top - bottom > _PARAGRAPH_GAP * height else "\n"
            parts.extend((sep, line.text))
            spans.append((length + len(sep), length + len(sep) + len(line.text), line))
            length += len(sep) + len(line.text)
        bottom = max(ln.box[3] for ln in row)
    return "".join(parts), spans


@dataclass(slots=True)
class PageOcr:
    """OCR for the pages of one file, within the page cap and time budget; collects the line boxes."""

    options: OcrOptions = field(default_factory=lambda: _options)
    started: float = field(default_factory=time.monotonic)
    pages: list[int] = field(default_factory=list)  # pages recognised
    left_out: list[int] = field(default_factory=list)  # pages past the cap or the budget
    lines: list[list[Any]] = field(default_factory=list)
    seconds: float = 0.0  # spent rendering and recognising pages

    @property
    def reason(self) -> str | None:
        """Why OCR cannot run (None: it can)."""
        return unavailable_reason()

    def add_image(self, builder: TextBuilder, image: Image, page: int) -> bool:
        """Recognise one page image and append its text as a PAGE block; False when nothing was read."""
        self.pages.append(page)
        started = time.perf_counter()
        text, spans = page_text(recognise(image))
        self.seconds += time.perf_counter() - started
        block = builder.add(text, PAGE, page=page)
        if block is None:
            return False
        if builder.text[block.start:block.end] == text:  # cleaning changed nothing: spans hold
            for start, end, line in spans:
                self.lines.append([block.start + start, block.start + end, page, *line.box, line.score])
        return True

    def add_pdf_page(self, builder: TextBuilder, pdf: pdfium.PdfDocument, index: int) -> bool:
        """Render page `index` at the configured DPI and recognise it (the caller holds pdfium's lock)."""
        if self.reason or not self.may_start(index + 1):
            if self.reason:
                self.left_out.append(index + 1)
            return False
        started = time.perf_counter()
        page = pdf[index]
        try:  # a poster-sized page is rendered no larger than recognition would read it
            scale = min(self.options.dpi / 72, _MAX_RENDER / max(*page.get_size(), 1.0))
            image = page.render(scale=scale).to_pil()
        finally:
            page.close()
        self.seconds += time.perf_counter() - started
        return self.add_image(builder, image, index + 1)

    def may_start(self, page: int) -> bool:
        """True when the cap and the budget allow another page; else note `page` as left out."""
        budget = self.options.budget_s
        if len(self.pages) >= self.options.max_pages or (
                budget is not None and time.monotonic() - self.started > budget):
            self.left_out.append(page)
            return False
        return True

    def metadata(self) -> dict[str, Any]:
        """What OCR did, for Document.metadata["ocr"] (empty when no page was recognised or left out)."""
        if not self.pages and not self.left_out:
            return {}
        out: dict[str, Any] = {"pages": self.pages}
        if self.pages:
            out.update(seconds=round(self.seconds, 2), engine=ENGINE, dpi=self.options.dpi, line_fields=list(LINE_FIELDS), lines=self.lines)
        if self.left_out:
            out["left_out"] = self.left_out
            out["left_out_reason"] = self.reason or (
                f"OCR reads at most {self.options.max_pages} pages per file (ingest.ocr_max_pages) "
                "and starts none past the file's time budget")
        return out
