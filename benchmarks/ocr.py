"""OCR accuracy and speed: generated pictures with known text, and a PDF without a text layer.

    pip install -e '.[ocr]' paperang-p2-fonts-cjk==0.1.0     # or: python3 run.py test (the test extra has both)
    python benchmarks/ocr.py [--pages 6] [--shared ../shared/data]

Accuracy is 1 - CER: the Levenshtein distance between the known text and what OCR read, over
the known text's length, with all whitespace removed from both (line breaks and the spaces
between words are layout, not content).  Each language is drawn in WenQuanYi Micro Hei (from the
`paperang-p2-fonts-cjk` wheel) at two sizes (14 and 24 px), as a page-wide picture of 8 lines:
clean (black on white), and scan-like (tilted 0.8 degrees, blurred, speckled, JPEG quality 40).

Speed: pages per second through `read_file` (the reader docqa uses: decode, recognise, build the
document), one process, after a warm-up page that loads the models; for the PDF, pages of a PDF
whose pages are pictures of text (no text layer), rendered at `ingest.ocr_dpi` and recognised.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from importlib.resources import files
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from docqa.ingest.readers import read_file  # noqa: E402

ENGLISH = [
    "The committee approved the budget for the new library on Tuesday.",
    "Invoices must be paid within thirty days of the delivery date.",
    "Backups run every night at 02:30 and are kept for 90 days.",
    "Replace the filter cartridge when the warning light turns amber.",
    "Quarterly revenue grew by 4.7 percent to 12.3 million euros.",
    "Please send the signed contract to the legal department by Friday.",
    "The server restarts automatically after a security update.",
    "Store the samples below 8 degrees and away from direct sunlight.",
]
CHINESE = [
    "知识库问答系统可以在本地运行，不需要联网。",
    "请在每月五日之前提交上个月的报销单据。",
    "扫描的合同经过文字识别以后也能被搜索到。",
    "会议室的投影仪需要提前一天在系统中预约。",
    "新员工入职培训包括安全规范和信息保密制度。",
    "本季度的销售额比去年同期增长了百分之七。",
    "数据每天凌晨两点自动备份，保存九十天。",
    "如果设备出现故障，请先关闭电源再联系维修。",
]


def font_path() -> str:
    return str(files("paperang_p2_fonts_cjk") / "fonts" / "wqy-microhei.ttc")


def draw(lines: list[str], size: int, width: int = 1654):
    """A page-wide white picture (A4 width at 200 DPI) with the lines in black."""
    from PIL import Image, ImageDraw, ImageFont

    face = ImageFont.truetype(font_path(), size)
    height = int(len(lines) * size * 1.8 + 2 * size)
    image = Image.new("RGB", (width, height), "white")
    pen = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        pen.text((size * 2, size + int(number * size * 1.8)), line, font=face, fill="black")
    return image


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def accuracy(truth: str, read: str) -> float:
    truth, read = "".join(truth.split()), "".join(read.split())
    return 1 - levenshtein(truth, read) / len(truth)


def degrade(image):
    """A scan's usual faults: tilted 0.8 degrees, blurred, grey speckle, saved as a JPEG of quality 40."""
    import io
    import random

    from PIL import Image, ImageFilter

    image = image.convert("L").rotate(0.8, expand=True, fillcolor=255).filter(ImageFilter.GaussianBlur(0.8))
    noise = random.Random(7)
    pixels = image.load()
    for _ in range(image.width * image.height // 50):
        x, y = noise.randrange(image.width), noise.randrange(image.height)
        pixels[x, y] = noise.randrange(96, 256)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=40)
    return Image.open(io.BytesIO(buffer.getvalue()))


def accuracy_rows(folder: Path) -> list[tuple[str, int, str, float, float]]:
    """(language, font px, condition, 1 - CER, seconds) for each language, size and condition."""
    rows = []
    for language, lines in (("English", ENGLISH), ("Chinese", CHINESE)):
        for size in (14, 24):
            for condition in ("clean", "scan-like"):
                image = draw(lines, size)
                path = folder / f"{language}-{size}-{condition}.png"
                (degrade(image) if condition == "scan-like" else image).save(path)
                started = time.perf_counter()
                doc = read_file(path)
                elapsed = time.perf_counter() - started
                rows.append((language, size, condition, accuracy("".join(lines), doc.text), elapsed))
    return rows


def scanned_pdf(folder: Path, pages: int) -> Path:
    """A PDF whose pages are pictures of text: English and Chinese lines, 20 px, A4."""
    from fpdf import FPDF

    picture = folder / "page.png"
    draw(ENGLISH + CHINESE + ENGLISH + CHINESE, 24).save(picture)
    pdf = FPDF()
    for _ in range(pages):
        pdf.add_page()
        pdf.image(str(picture), x=0, y=10, w=210)
    path = folder / "scanned.pdf"
    pdf.output(str(path))
    return path


def pages_per_second(path: Path, pages: int) -> tuple[float, float, float]:
    """(pages/s, CPU seconds per page, 1 - CER of the first page) reading `path` once."""
    started, cpu = time.perf_counter(), time.process_time()
    doc = read_file(path)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    first = next(b for b in doc.blocks if b.page == 1)
    truth = "".join(ENGLISH + CHINESE + ENGLISH + CHINESE)
    return pages / elapsed, cpu / pages, accuracy(truth, doc.text[first.start:first.end])


def image_rate(folder: Path, count: int) -> tuple[float, float]:
    """(pictures/s, CPU seconds per picture): `count` page pictures (English and Chinese, 24 px), one by one."""
    path = folder / "page-image.png"
    draw(ENGLISH + CHINESE + ENGLISH + CHINESE, 24).save(path)
    times, cpus = [], []
    for _ in range(count):
        started, cpu = time.perf_counter(), time.process_time()
        read_file(path)
        times.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    return 1 / statistics.median(times), statistics.median(cpus)


def pipeline_rate(folder: Path, count: int) -> tuple[float, int]:
    """(pages/s, chunks) of `docqa add` on `count` page pictures with two worker processes (BM25 only)."""
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    pictures = folder / "pictures"
    pictures.mkdir()
    for number in range(count):  # each picture different, so none is skipped as a duplicate
        draw([f"Picture number {number}."] + ENGLISH + CHINESE, 24).save(pictures / f"p{number}.png")
    settings = Settings(kb=str(folder / "kb.db"), ingest={"workers": 2}, embed={"provider": "none"})
    with KnowledgeBase(settings) as kb:
        started = time.perf_counter()
        report = kb.add([pictures])
        elapsed = time.perf_counter() - started
    assert len(report.added) == count, report.failed
    return count / elapsed, report.chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=4, help="pages in the scanned PDF")
    parser.add_argument("--shared", type=Path, default=HERE.parent.parent / "shared" / "data")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        draw(["warm up 预热"], 32).save(folder / "warm.png")
        started = time.perf_counter()
        read_file(folder / "warm.png")
        print(f"first page (loads the models): {time.perf_counter() - started:.2f} s\n")
        print("| text | font px | picture | 1 − CER | seconds |\n|---|---|---|---|---|")
        for language, size, condition, score, seconds in accuracy_rows(folder):
            print(f"| {language}, 8 lines | {size} | {condition} | {score:.3f} | {seconds:.2f} |")
        rate, cpu = image_rate(folder, 3)
        print(f"\npage pictures (1654 px wide, 32 lines, 24 px): {rate:.2f} pages/s, {cpu:.1f} CPU s/page")
        rate, cpu, score = pages_per_second(scanned_pdf(folder, args.pages), args.pages)
        print(f"PDF without a text layer, {args.pages} pages at 200 DPI: {rate:.2f} pages/s, "
              f"{cpu:.1f} CPU s/page, 1 − CER (page 1) {score:.3f}")
        rate, chunks = pipeline_rate(folder, args.pages)
        print(f"docqa add, {args.pages} page pictures (17 lines), 2 workers: {rate:.2f} pages/s, {chunks} chunks")
    edge = args.shared / "docs" / "multiformat" / "edge"
    for name in ("chi_sim_image.jpeg", "single_table.pdf"):
        if (edge / name).is_file():
            started = time.perf_counter()
            doc = read_file(edge / name)
            print(f"{name}: {time.perf_counter() - started:.2f} s, {len(doc.text)} characters")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak:.0f} MB; load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
