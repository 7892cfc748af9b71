"""A real-documentation corpus rebuilt from Debian packages: 60 HTML pages and three PDF manuals (issue 34).

    python benchmarks/debian_docs.py [--out benchmarks/.work/debian-docs] [--cache /tmp/docqa-debian-docs]

Documentation nobody on the project wrote, from packages other than those the answer-quality sets use
(debian-handbook, debian-faq, maint-guide, debian-reference):

- valgrind: its manual as 40 HTML pages (user manual, tools, FAQ, release notes; 1.9 MB);
- libffi-dev: libffi's manual as 20 HTML pages (texinfo's HTML);
- nettle-dev: the Nettle manual (PDF, 111 pages); bzip2-doc: the bzip2 manual (PDF, 38 pages);
  libtasn1-doc: the libtasn1 manual (PDF, 36 pages); zlib1g-dev: "A painless guide to CRC error
  detection algorithms" (PDF, 29 pages, fonts embedded: 0.78 MB).

About 3.4 MB in 64 files (Debian 12's versions).  Each file is taken from /usr/share/doc when the package is installed
there, else from the package itself: `apt-get download PKG` (no root needed) into `--cache`,
unpacked with `dpkg-deb -x`.  Compressed files (`.pdf.gz`) are stored uncompressed.  <out>.tsv
beside the folder (not in it: it is no document) names each file's package, the package's version, its size and sha256, so two
runs can tell whether they read the same corpus.  Used by vs_llamaindex.py (corpus `debian`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# package: (folder inside the package, file name pattern) per part; files land in <out>/<package>/
PARTS: dict[str, list[tuple[str, str]]] = {
    "valgrind": [("usr/share/doc/valgrind/html", "*.html")],
    "libffi-dev": [("usr/share/doc/libffi8/html", "*.html")],
    "nettle-dev": [("usr/share/doc/nettle-dev", "nettle.pdf.gz")],
    "bzip2-doc": [("usr/share/doc/bzip2", "manual.pdf.gz")],
    "libtasn1-doc": [("usr/share/doc/libtasn1-doc", "libtasn1.pdf")],
    "zlib1g-dev": [("usr/share/doc/zlib1g-dev", "crc-doc.1.0.pdf.gz")],
}


def installed_version(package: str) -> str | None:
    """The installed version of `package` (None when it is not installed)."""
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", package], capture_output=True, text=True)
    status, _, version = done.stdout.partition("\t")
    return version if done.returncode == 0 and status.endswith(" installed") else None


def package_root(package: str, cache: Path, download: bool = False) -> tuple[Path, str]:
    """The root under which `package`'s files are found, and its version: / when installed (unless
    `download`), else the package downloaded and unpacked into `cache`."""
    version = None if download else installed_version(package)
    if version is not None and all(any((Path("/") / folder).glob(pattern)) for folder, pattern in PARTS[package]):
        return Path("/"), version
    root = cache / package
    debs = sorted(cache.glob(f"{package}_*.deb"))
    if not debs:
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["apt-get", "download", package], cwd=cache, capture_output=True, text=True)
        debs = sorted(cache.glob(f"{package}_*.deb"))
        if done.returncode != 0 or not debs:
            sys.exit(f"cannot download {package} ({done.stderr.strip() or 'no .deb'}): run `apt-get update` first, "
                     f"or install {package}")
    if not root.exists():
        subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(root)], check=True)
    version = subprocess.run(["dpkg-deb", "-f", str(debs[-1]), "Version"], capture_output=True, text=True, check=True).stdout.strip()
    return root, version


def build(out: Path, cache: Path, download: bool = False) -> Path:
    """Make the corpus in `out` (kept when its manifest is there) and return `out`."""
    if manifest(out).exists() and out.is_dir():
        return out
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    rows = ["package\tversion\tfile\tbytes\tsha256"]
    for package, parts in PARTS.items():
        root, version = package_root(package, cache, download)
        for folder, pattern in parts:
            for source in sorted((root / folder).glob(pattern)):
                data = source.read_bytes()
                name = source.name
                if name.endswith(".gz"):
                    data, name = gzip.decompress(data), name[:-3]
                target = tmp / package / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                rows.append(f"{package}\t{version}\t{package}/{name}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    manifest(out).write_text("\n".join(rows) + "\n", encoding="utf-8")
    return out


def manifest(out: Path) -> Path:
    """The corpus's manifest: package, version, file, bytes and sha256 of each file."""
    return out.with_name(out.name + ".tsv")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(HERE / ".work" / "debian-docs"))
    parser.add_argument("--cache", default="/tmp/docqa-debian-docs", help="where packages not installed are downloaded")
    parser.add_argument("--download", action="store_true", help="download every package, even one installed here")
    args = parser.parse_args()
    folder = build(Path(args.out), Path(args.cache), args.download)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    kinds: dict[str, int] = {}
    for path in files:
        kinds[path.suffix] = kinds.get(path.suffix, 0) + 1
    print(f"{folder}: {len(files)} files ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), "
          f"{sum(p.stat().st_size for p in files) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
