"""Measured rates the plan's estimates rest on, each with the benchmarks/RESULTS.md section it
comes from.  All were measured on the shared 2-vCPU machine with default settings (2 parser
processes, 512/50-token chunks); a laptop is usually faster, a loaded server slower.
"""

from __future__ import annotations

# -- parsing, chunking, full-text indexing (no vectors) ------------------------------------------
# "the ingest estimate per language" (2026-12-06): the CPU seconds of `docqa add FOLDER` in a new process
# (start, imports, dictionaries, the parser workers), fitted on the fit folders (benchmarks/init_estimate.py
# FIT_FOLDERS: English and Chinese man pages, Markdown, JSON, HTML, code, PDF; 9 folders of 2 to 17,842 files) and
# checked on the others.  On two cores to itself an add takes about its CPU time (the workers parse while
# the main process writes); on a loaded machine the wall time is longer.
# "the fixed cost of an add, chunk rows by pages" (2026-12-06): START_S is measured, not fitted: `docqa add` of a
# folder of one short page (benchmarks/init_estimate.py start), the median of 10 adds at loads 3-14 (1.0-1.4 CPU-s:
# the same add costs more CPU on a busy machine).  A file alone costs less than FILE_S (1,000 one-line pages: 0.3 ms
# each); FILE_S, fitted on 17,842 man pages, also carries their roff reading (0.15-0.21 us a character, measured
# apart); a rate per roff character with 0.3 ms a file fits the fit folders no better.
START_S = 1.22  # the process, its imports, a new knowledge base, the parser pool: an add of one short page
FILE_S = 0.00116  # a file: listing, hashing, a document row, a worker's round trip (and a man page's roff)
HAN_S = 2.19e-6  # a Han character: jieba segments Chinese for full-text search, on top of the other work
PAGE_BYTE_S = 2.35e-7  # a byte of a laid-out format (PDF, slides, sheets, RTF, OLE, archives): parsing it
# "repetition, pictures, equal chunks" (2026-12-06): the work on text (reading, chunking, counting, indexing)
# follows what it compresses to more than its length: a test log of repeated lines packs 3-4 times tighter than
# prose (zlib on 32,000 characters spread over each file, measured by the survey, Han characters left out) and
# costs under half as much a character.  Fitted on the fit folders above plus a generated test log
# (benchmarks/init_estimate.py fit-time; FIT_FOLDERS, TEST_LOG), the other rates as they were; JSON records
# (the fit folders' JSON is SQuAD's) have a rate of their own.
# "the fixed cost of an add, chunk rows by pages": kept.  Refitted with START_S measured, on the fit folders and two
# more of plain English prose (/usr/share/info, common-licenses), a rate a token instead of a character predicted each
# fit folder better from the others (fit-time) but the check folders worse (/usr/share/doc +19 %, gdb's test log +21 %,
# against +7 % and +7 % with these rates, same run): not taken.
# "JSON on one line, scifact's miss" (2026-12-06): the JSON reader indexes the source as it is (records or nested,
# the same text); JSON is chunked by lines, and a line longer than a chunk is cut at token boundaries (the line
# encoded whole, decoded token by token).  SQuAD's JSON (a fit file) on one line against the same JSON a value a line,
# four copies in one add: 0.250 against 0.216 CPU-us a character (medians of 9 and 6 adds): JSON_CUT_S.  JSON_CHAR_S
# refitted with it on the fit folders (SQuAD's folder: 1.90 M characters of JSON, 1.14 M of them on one line).  At
# equal size scifact's JSON Lines cost what SQuAD's JSON does (4.55 M characters: 2.33 and 2.36 CPU-s an add).
CHAR_S = 4.33e-8  # a character of text (not Han) of a text-like format
PACKED_S = 7.82e-7  # a byte the non-Han text compresses to, on top of CHAR_S
JSON_CHAR_S = 2.07e-7  # a character of JSON (not Han), instead of the two above
JSON_CUT_S = 3.4e-8  # on top: a JSON character in a line longer than a chunk (cut at token boundaries)
PACKED_PER_CHAR = 0.35  # when no file of a format was measured: prose packs to about this
# "the ingest estimate per language": four manual pages rendered at 200 DPI (86-270 KB JPEGs) took 11.8
# CPU-seconds of OCR in `docqa add`, 2.96 s a page.  (Wall time on a loaded machine is several times that:
# "OCR for pictures and scanned PDF pages (issue 15, item 5)" saw 0.10-0.12 pages/s.)
OCR_PAGES_PER_S = 1 / 2.96
# "repetition, pictures, equal chunks" (2026-12-06): a picture's OCR follows its pixels as text detection sees
# them (long side scaled to 1280, read from the header) and a start of its own, fitted on the 28 distinct pictures
# of the Rust documentation (benchmarks/init_estimate.py ocr-fit: screenshots, diagrams, logos; 15.9 MP, 30.2
# CPU-s), one OCR thread as in a parser worker.  (A page full of text takes longer: the four manual pages above.)
OCR_PICTURE_S = 0.213
OCR_MEGAPIXEL_S = 1.52

# -- embedding ------------------------------------------------------------------------------------
# The models embed sentence windows of text, so their time follows the characters, not the chunks; a Han
# character is about one SentencePiece token, an English word four or five characters.
# "the ingest estimate per language" (2026-12-06): the CPU seconds `docqa add` with the bundled model (USE
# multilingual) takes on top of a full-text-only add, fitted on four fit folders (SQuAD subset, Flask code, vim
# tutors, manpages-zh): 145,000 characters a CPU-second, 39,700 Han characters.  ("hybrid retrieval (issue 3)"
# saw 32,500 characters/s of wall time on the shared cores: the load of the other sessions.)
USE_CHAR_S = 5.75e-6
USE_HAN_S = 1.30e-5
# "the fixed cost of an add, chunk rows by pages" (2026-12-06): loading the model, once per add that embeds (an add of
# a one-page folder with the bundled model less the same add without: 0.43-0.64 CPU-s; benchmarks/init_estimate.py
# start; on the rewritten graph, "the model's windows": 0.43 again); USE_CHAR_S and USE_HAN_S refitted with it taken out
# (fit-embed, the same four fit folders; again on the rewritten graph).
EMBED_START_S = 0.43
# "the embedding time by the model's own tokens" (2026-12-06): the model's time follows its own tokens (SentencePiece,
# its graph's first node; the survey runs that node alone on the windows the model reads: enriched chunk texts,
# filler dropped), not characters: JSON keys, ids and numbers make more tokens a character than prose (in-process,
# 14-17 CPU-us a token for English, Chinese, Russian, JSON and SciFact's records alike; 3.5-9.5 us a character).
# Fitted on the same four fit folders (fit-embed; the adds' CPU with the model less without, EMBED_START_S taken out).
# USE_CHAR_S and USE_HAN_S stay for when the model (and so its tokenizer) is not installed.
# "the model's windows" (2026-12-06): the model's graph was rewritten since (embed/use_graph.py, 14 % less CPU), and
# its time is one cost a token and one a window it reads (a row of a batch: onnxruntime's per-run overhead, shared by
# the batch's 4 windows).  Records and short sections make many short windows: SciFact 10.9 windows a 1,000 tokens
# (92 tokens a window) against SQuAD's 6.5, CMRC's 4.0.  Padding costs next to nothing (a batch of one long and three
# short windows takes 0.42 of the time of four long ones with the same padded length).  The survey counts the windows
# of its sample (within 1.2 % of all of a folder's windows on 6 of 8 folders; debian-edu-zh -4 %, multiformat +8 %).
# USE_WINDOW_S measured in process
# (init_estimate.py windows: windows of 20-500 characters cut from the same texts; the median of 10 fits, 93-218 us, at
# loads 9-20); USE_TOKEN_S fitted on the four fit folders' adds (fit-embed, medians of two runs) with the windows and the
# model's load taken out.
USE_TOKEN_S = 1.35e-5
USE_WINDOW_S = 1.7e-4
# "the ingest estimate on /usr/share/doc as a new user meets it" (2026-12-06): `docqa init` proposes multilingual-e5-small
# for English text when its extra is installed, and its time was the bundled model's x 30/7 ("hybrid retrieval (issue 3)":
# SciFact at 7 chunks/s against 30), measured before the bundled model's graph was rewritten.  e5 reads a chunk as one
# window, cut at 512 tokens, and costs ~150-225 CPU-us a token (in process, init_estimate.py e5: passages of 300-4,000
# characters of prose and a test log; the bundled model 14-17 on the same passages): 7-14 times the bundled model, more
# on short windows.  E5_TOKEN_S fitted on four fit folders' adds (init_estimate.py fit-e5, least squares on relative
# errors: docs/code 289 us, common-licenses 246, the SQuAD subset 220, the generated test log 211 a token, the estimate's
# full-text part and E5_START_S taken out; the add runs e5 beside the parser workers; what makes code dearer is not found);
# E5_START_S measured (start: one page with e5 2.24 CPU-s, without 1.30, medians of 3).
E5_CHUNK_TOKENS = 512
E5_TOKEN_S = 2.35e-4
E5_START_S = 0.94
# remote embedding servers: not measured here; a guess, said as such in the estimate's notes.
REMOTE_CHARS_PER_S = 50_000.0

# -- index size ------------------------------------------------------------------------------------
# "the ingest estimate per language" (2026-12-06): fitted on the full-text-only adds of the fit folders
# (benchmarks/init_estimate.py FIT_FOLDERS), checked on the others.  A new knowledge base's file is 164 KiB;
# each character of text is kept twice (the document, its chunks with their overlap) and posted in the
# full-text index; a Han character is three bytes of UTF-8 in each copy, and the chunks keep a second,
# jieba-segmented copy of Chinese text for full-text search.  A chunk is a row, with its title and section.
INDEX_EMPTY_BYTES = 167_936
# "the fixed cost of an add, chunk rows by pages": the chunks' rows are counted as the pages they fill (the survey packs each
# sampled file's rows as SQLite appends them, docqa.plan.probe.row_pages): a full chunk of prose is a 2-4 KB row
# and leaves much of its page empty, so a folder of long chunks (slides, documents, READMEs) takes more per
# character than one of short man pages (docs/multiformat: 640 pages of chunks, 29 % of them empty; the survey
# counts 636).  The rest refitted on the fit folders with the pages counted (fit-size).
INDEX_PAGE_BYTES = 4096  # a page of the chunks table (docqa.plan.probe.PAGE_BYTES)
INDEX_BYTES_PER_CHAR = 1.51  # a character other than Han (Latin, digits, spaces, punctuation): its copy, its postings
INDEX_BYTES_PER_HAN = 6.88  # a Han character (its chunk copies are in the pages)
INDEX_BYTES_PER_CHUNK = 234  # a chunk's index entries (its id, its document, its hash, its full-text size)
INDEX_BYTES_PER_WIDE = 1.0  # a UTF-8 byte past one a character (Cyrillic, Greek, kana: 2-3 bytes) in the document's copy
INDEX_BYTES_PER_FILE = 1456  # a document's row: path, title, keywords, summary, metadata (and their full-text entries)
ROW_PAGES_PER_CHUNK = 0.5  # pages a chunk's row fills when no file of its format was sampled
# "the ingest estimate per language": 1,375-1,485 bytes a chunk with vectors than without on the fit folders
# ("hybrid retrieval (issue 3)", At 100k chunks: 313 MB with vectors, 156 MB without: 1,570; 512-d, float16).
VECTOR_BYTES_PER_CHUNK_512D = 1460

# -- text per file byte and chunk size, when the sample has no file of a type -----------------------
# Fallbacks only: the survey measures these on its sample (text characters per file byte).
TEXT_PER_BYTE = {"pdf": 0.08, "docx": 0.35, "pptx": 0.08, "xlsx": 0.5, "epub": 0.6, "odt": 0.3, "html": 0.35,
                 "eml": 0.6, "archive": 1.5, "compressed": 3.0, "image": 0.0}
BYTES_PER_CHAR = 1.0  # plain text and Markdown: a UTF-8 character of English text is one byte
# tiktoken cl100k: ~4 characters of English per token, ~1.3 of Chinese (text/tokens.py counts exactly)
CHARS_PER_TOKEN = 3.6
PAGE_BYTES_SCANNED = 150_000  # a scanned PDF page, for counting pages from a file size (a 200 DPI JPEG page)

# -- answering, when the run log holds no run to average (docqa estimate) ----------------------------
# The local model (README, Chat models; RESULTS "the local model, from install to a first answer"):
# about 65 prompt tokens/s and 23 generated tokens/s on 2 idle cores.
LOCAL_PROMPT_TOKENS_PER_S = 65.0
LOCAL_COMPLETION_TOKENS_PER_S = 23.0
# A remote or GPU-served model: not measured here; typical hosted speeds, said as an assumption.
REMOTE_PROMPT_TOKENS_PER_S = 2000.0
REMOTE_COMPLETION_TOKENS_PER_S = 60.0
RETRIEVAL_S = 0.1  # hybrid search p50 ~19 ms at 100k chunks ("hybrid retrieval"), with the rest of a run's work
