"""Charset detection for text-like formats: BOM, then strict UTF-8, then a guarded detector.

The detector (charset-normalizer) is unreliable on short Western European text: it proposes
cp1250 for Latin-1 / windows-1252 files and garbles ñ and å.  When it proposes a single-byte
code page we therefore prefer windows-1252 whenever the bytes decode under it cleanly and the
result reads like Western European text.
"""

from __future__ import annotations

import codecs
import re

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_MULTIBYTE = ("gb", "big5", "shift_jis", "cp932", "euc", "iso2022", "hz", "johab", "cp949", "utf")
_DETECT_BYTES = 256 * 1024
# Characters windows-1252 text plausibly holds beyond ASCII.
_WESTERN = set(
    "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿŒœŠšŽžŸƒ"
    "€‚„…†‡ˆ‰‹›‘’“”•–—˜™¡¢£¥¦§¨©ª«¬®¯°±²³´µ¶·¸¹º»¼½¾¿×÷\u00a0\u00ad"
)
_ALIASES = {
    "latin-1": "cp1252", "latin1": "cp1252", "iso-8859-1": "cp1252", "iso8859-1": "cp1252",
    "us-ascii": "cp1252", "ascii": "cp1252", "gb2312": "gb18030", "gbk": "gb18030",
    "x-gbk": "gb18030", "utf8": "utf-8",
}


def bom_encoding(data: bytes) -> str | None:
    """The encoding a byte-order mark announces, or None."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    return None


def normalize_label(label: str) -> str | None:
    """A declared charset label as a Python codec name (WHATWG aliases), or None if unknown."""
    label = _ALIASES.get(label.strip().lower(), label.strip().lower())
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def looks_binary(data: bytes) -> bool:
    """NUL bytes (without a UTF-16/32 BOM) mean this is not a text file."""
    return b"\x00" in data[:8192] and bom_encoding(data) is None


# Bytes plain text does not hold (NUL and C0 controls but tab, newlines, form feed and ESC).
_CONTROLS = bytes([*range(0, 9), *range(14, 27), *range(28, 32)])
_WINDOW, _WINDOWS = 4096, 32


def looks_binary_throughout(data: bytes) -> bool:
    """More than 1 % control bytes in windows sampled across the whole file (a text head does not
    make a text file: 12 KB of prose followed by 1 MB of random bytes is binary)."""
    if bom_encoding(data) is not None:
        return False
    if len(data) <= _WINDOW * _WINDOWS:
        sample = data
    else:
        step = (len(data) - _WINDOW) // (_WINDOWS - 1)
        sample = b"".join(data[i * step : i * step + _WINDOW] for i in range(_WINDOWS))
    controls = len(sample) - len(sample.translate(None, _CONTROLS))
    return controls > len(sample) // 100


def looks_western(text: str) -> bool:
    """True when the non-ASCII characters are the Western European ones, sparsely spread."""
    extra = [c for c in text if ord(c) > 127]
    if not extra:
        return True
    western = sum(c in _WESTERN for c in extra)
    letters = sum(c.isalpha() for c in text)
    # Mis-decoded Cyrillic/Greek/CJK is almost all "accented" letters; real Western text is not.
    return western >= 0.95 * len(extra) and len(extra) <= 0.5 * max(letters, 1)


def decode(data: bytes, declared: str | None = None) -> tuple[str, str]:
    """Decode `data` to str; return (text, encoding used). Never raises on odd bytes."""
    bom = bom_encoding(data)
    if bom:
        return data.decode(bom, errors="replace"), bom
    if declared and (codec := normalize_label(declared)):
        try:
            return data.decode(codec), codec
        except UnicodeDecodeError:
            pass  # a wrong declaration is common; fall through to detection
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    encoding = detect(data)
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError:
        return data.decode(encoding, errors="replace"), encoding


def detect(data: bytes) -> str:
    """Best codec for non-UTF-8 bytes, preferring windows-1252 over other single-byte guesses."""
    import charset_normalizer  # only for bytes that are not UTF-8

    sample = data[:_DETECT_BYTES]
    best = charset_normalizer.from_bytes(sample).best()
    guess = codecs.lookup(best.encoding).name if best else None
    if guess and guess.startswith(_MULTIBYTE):
        return "gb18030" if guess in ("gb2312", "gbk") else guess
    try:
        if looks_western(sample.decode("cp1252")) and _decodes(data, "cp1252"):
            return "cp1252"
    except UnicodeDecodeError:
        pass
    if guess:
        return guess
    return "gb18030" if _decodes(sample, "gb18030") else "cp1252"


def _decodes(data: bytes, codec: str) -> bool:
    try:
        data.decode(codec)
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 4  # a multibyte char cut by the sample boundary
    return True


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_DECL = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""", re.I)


def declared_html_charset(data: bytes) -> str | None:
    """The charset from <meta charset>, http-equiv or an XML declaration in the first 4 KB."""
    head = data[:4096]
    match = _META_CHARSET.search(head) or _XML_DECL.search(head)
    return match.group(1).decode("ascii") if match else None
