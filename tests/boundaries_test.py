"""Where a private path or name starts (kitbuild.shapes): after whatever is no letter of a word."""

from __future__ import annotations

import json
import pickle
import unicodedata

import hypothesis.strategies as st
import pytest
from hypothesis import given

from kitbuild.observe import Observer, Plan
from leaks_test import BUILD, VERIFY, found


def kb501(data: bytes, binary: bool = False) -> bool:
    return "KB501" in [code for code, _ in found(data, VERIFY, binary=binary)]


# Before a path: a typographic quote, a no-break space (French puts one before a colon), a
# full-width colon or bracket (CJK logs), a dash, a bullet, an arrow: none is part of a word.
PUNCTUATION = ["\u201c", "\u2018", "\u00ab", "\u00a0", "\u202f", "\uff1a", "\u300c", "\u2014", "\u2022", "\u2192", "\u3000", "\u00b7", "\u2026"]


@pytest.mark.parametrize("mark", PUNCTUATION, ids=[unicodedata.name(c) for c in PUNCTUATION])
@pytest.mark.parametrize("path", ["/home/bob/runs", "C:\\Users\\bob\\x", "/scratch/bob/x"])
def test_a_path_after_non_ascii_punctuation_is_found_in_every_encoding(mark, path):
    text = f"saved to {mark}{path}{mark}\n"
    assert kb501(text.encode())
    assert kb501(json.dumps(text).encode())  # \\u201c... escaped, as json.dumps writes it
    assert kb501(text.encode("utf-16-le"), binary=True)


@given(st.characters(min_codepoint=0x80, max_codepoint=0x2FFFF, exclude_categories=("Cs",)))
def test_a_path_starts_after_any_non_ascii_character_but_a_letter_digit_or_mark(c):
    # 'données/home/x' is a relative path; '“/home/x' is not.
    word = unicodedata.category(c)[0] in "LNM"
    assert kb501(f"x {c}/home/bob/y\n".encode()) is not word
    assert kb501(f"x {c}/home/bob/y\n".encode("utf-16-le"), binary=True) is not word


def test_a_path_after_a_binary_formats_length_byte_is_found():
    # msgpack: a string of up to 31 bytes follows a 0xa0-0xbf byte; pickle: its length byte.
    for length in (20, 31):
        path = ("/home/bob/" + "r" * 40)[:length].encode()
        assert kb501(b"\x81\xa4ckpt" + bytes([0xA0 + length]) + path, binary=True)
    for length in (130, 200):
        data = pickle.dumps({"ckpt": "/home/bob/" + "r" * (length - 10)}, protocol=4)
        assert kb501(data, binary=True)


@pytest.mark.parametrize("protocol", range(1, pickle.HIGHEST_PROTOCOL + 1))
def test_a_name_next_to_a_binary_formats_length_or_opcode_is_found(protocol):
    # A pickle writes a string's length in one byte (0x8c, then 'X' for 88 bytes) or four ('X',
    # then 88, 0, 0, 0) and, in protocols 1 to 3, 'q' and a memo number after it: a letter either
    # side of the name. (Protocol 0, Python 2's text pickle, writes 'V' and the string.)
    for length in range(5, 130):
        data = pickle.dumps({"host": ("gpu07" + " " * length)[:length], "also": ["gpu07.lab.example.org" + "x" * length]}, protocol=protocol)
        assert [code for code, _ in found(data, BUILD, binary=True)].count("KB901") == 2, (protocol, length)
    # protobuf: field 1 of 46 bytes is '\n' and '.' before its text; field 8 is tagged 'B'.
    assert "KB901" in [code for code, _ in found(b"\x0a." + b"gpu07.lab.example.org" + b" " * 25 + b"\x12\x02ok", BUILD, binary=True)]


# A length that reads as a letter, in the ways formats write one: msgpack's str8 (0xd9, then
# 88 as 'X') in a file with no NUL (read as text, so only after a byte no text file holds),
# Avro's zigzag varint (twice the length: 14 for 7), CBOR's head of a short text (0x60 + 10).
LENGTHS = {
    "msgpack, no NUL": (b"\x92\xd9Xgpu07" + b" " * 83 + b"\x05", False),
    "a control byte, no NUL": (b"\x01Xgpu07" + b" " * 83 + b"\x01", False),
    "Avro": (b"Obj\x01\x0egpu07 x\x02", True),
    "CBOR": (b"\x00\xa1ahjgpu07/6ec2\xa1", True),
    # With no NUL, a head after the string that no text file writes there (0xa1 after ASCII).
    "CBOR, no NUL": (b"\xa1ahegpu07\xa1axfxgpu07", False),
}


@pytest.mark.parametrize("case", LENGTHS)
def test_a_name_after_a_length_in_any_format_is_found(case):
    data, binary = LENGTHS[case]
    assert "KB901" in [code for code, _ in found(data, BUILD, binary=binary)]


def test_a_path_after_a_length_byte_in_a_file_with_no_nul_is_found():
    # msgpack's str16 (0xda, then 0x01 0x37: 311 bytes): '7' after a byte no text file holds.
    assert kb501(b"\x92\xd0\xfd\xda\x017/home/ada/" + b"r" * 301)
    # msgpack's head of a short string (0xa0 + 11) reads as no UTF-8 in text, as a Latin-1
    # letter would; the string it measures, ended by a byte no text file writes, says otherwise.
    assert kb501(b"\x82\xa1a\xa3run\xa1b\xab/home/ada/r\x07")
    assert not kb501(b"x 7/home/ada/r")  # in text, a relative path
    assert not kb501(b"donn\xe9es/home/x, "  + b"x" * 80)  # after a Latin-1 letter too


@pytest.mark.parametrize("text", [b"\0 xgpu07 ", b"\0gpu070\0", b"\0gpu07a b", b"\0 Xgpu07", b"\0xgpu07\0", b"\0gpu07a\0", b"\x8c\x06xgpu07\x94", b"\x8c\x06gpu07a\x94", b"\0\nxgpu07\n"])
def test_a_longer_name_in_binary_text_is_not_the_private_one(text):
    # Other machines' names: a letter before or after the name that no length measures as a
    # whole string (C strings between NULs; a pickle's string of 6 bytes that starts with 'x').
    assert "KB901" not in [code for code, _ in found(text, BUILD, binary=True)]


COLOURED = [
    b"\x1b[0;32m/home/bob/x\x1b[0m",
    b"\x1b[1m/home/bob/x",
    b"\x1b[m/home/bob/x",
    b"\x1b[38;5;208m/home/bob/x",
    b"\x1b[2K/home/bob/x",
    b'"\\u001b[0;31m/home/bob/x\\u001b[0m"',  # a notebook's traceback, in its JSON
    b"echo -e '\\033[1;34m/home/bob/x'",
    b"printf '\\e[1m/home/bob/x'",
    b"\x1b[1mC:\\Users\\bob\\x",
]


@pytest.mark.parametrize("text", COLOURED)
def test_a_path_after_a_terminal_code_is_found(text):
    assert kb501(text)


@pytest.mark.parametrize("text", [b"\x1b[1mgpu07.lab.example.org\x1b[0m", b"\x1b[1mgpu07\x1b[0m", b"as \x1b[1mada\x1b[0m", b'"\\u001b[32mgpu07\\u001b[0m"'])
def test_a_name_after_a_terminal_code_is_found(text):
    assert "KB901" in [code for code, _ in found(text, BUILD)]


@pytest.mark.parametrize("text", [b"form/home/x", b"am/home/x", b"[1m/home/x", b"\x1b[1;2;3;4;5;6;7;8;9;10;11;12;13m/home/x"])
def test_a_letter_is_part_of_a_word_unless_a_terminal_code_ends_with_it(text):
    # The last: longer parameters than any colour has are not read back.
    assert not kb501(text)
    assert "KB901" not in [code for code, _ in found(text.replace(b"/home/x", b"gpu07"), BUILD)]


@pytest.mark.parametrize("text", [b"/opt/app/../../home/bob/x", b"/scratch/../home/bob/x", b"cd /srv/app/../Users/bob/x"])
def test_a_home_folder_after_dot_dot_in_an_absolute_path_is_found(text):
    assert kb501(text)


@pytest.mark.parametrize(
    "text",
    [
        b"import { Home } from '../home/home.component';",  # an app's relative import
        b"[back](../home/README.md)",
        b'"../Users/_List"',
        b"https://example.org/docs/../home/x",
        b"loading.../home",
        b"../data/train.json",
        b"../../scratch/x",
        b"a/../work/x",
    ],
)
def test_dot_dot_in_a_relative_path_or_a_url_is_no_private_path(text):
    assert not kb501(text)


@pytest.mark.parametrize("text", ["g\xe9n\xe9r\xe9/data/x".encode().decode("unicode_escape").encode("latin-1"), "数据/data/x".encode("gbk")])
def test_a_relative_path_after_a_letter_of_a_legacy_encoding_in_text_is_no_private_path(text):
    assert not kb501(b"saved to " + text + b"\n")
    assert kb501(b"\0" + b"saved to " + text + b"\n", binary=True)  # in binary data no byte above ASCII is a letter


def test_a_path_after_a_msgpack_str8_length_is_found_in_binary_data():
    path = ("/home/ada/experiments/" + "x" * 200)[:133].encode()
    assert kb501(b"\x82\xa1n\x00\xa4path\xd9" + bytes([len(path)]) + path, binary=True)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-32-le"])
@pytest.mark.parametrize("before", [b"", "\ufeff", b"\x2b", b"MZ\x90\x00"])
def test_an_allowed_e_mail_at_the_start_of_wide_text_is_passed(encoding, before):
    # The other byte order's reading, one byte early, loses the address's first character.
    from kitbuild.leaks import LeakScanner

    prefix = before.encode(encoding) if isinstance(before, str) else before
    data = prefix + "ci@runner.example.org built ok\n".encode(encoding)
    assert [leak.code for leak in LeakScanner(allow=["ci@runner.example.org"]).scan(data, binary=True)] == []
    assert [leak.code for leak in LeakScanner().scan(data, binary=True)] == ["KB502"]


@pytest.mark.parametrize("text", ["[10.05.30.123] started", "BIOS 10.00.00.01", "fw 10.01.02.3", "192.168.001.005"])
def test_a_dotted_number_with_zero_padded_parts_is_no_address(text):
    # A time of day in a log, a firmware's version: zero-padded parts are not how an address is written.
    assert found(f"{text}\n".encode(), VERIFY) == []


@pytest.mark.parametrize("text", ["route 10.0.0.0/8 via the VPN", "172.16.0.0/12", "192.168.0.0", "AssemblyVersion 10.0.0.0"])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le"])
def test_a_private_ranges_first_address_names_no_machine(text, encoding):
    assert found(text.encode(encoding), VERIFY, binary=encoding != "utf-8") == []
    assert [code for code, _ in found(text.replace(".0 ", ".7 ").replace(".0/", ".7/").replace(".0.0", ".0.7").encode(encoding), VERIFY, binary=encoding != "utf-8")] == ["KB503"]


@pytest.mark.parametrize("text", ["1.10.000.000.5", "10.0001.0.1", "192.168.0.1000"])
def test_a_longer_dotted_number_is_no_address(text):
    assert [code for code, _ in found(f"v {text}\n".encode(), VERIFY)] == []


@pytest.mark.parametrize(
    "spelling",
    ["/opt/bench//lme/a0/rows.tsv", "/opt/bench/./lme/a0/rows.tsv", "/opt//bench///lme/x", "/opt/./bench/.//lme/x"],
)
def test_a_private_path_with_extra_slashes_or_dot_parts_is_found(spelling):
    # '$ROOT/' joined to '/lme' prints the source's path with a '//' in it: the same path.
    from kitbuild.leaks import LeakScanner

    scanner = LeakScanner({"/opt/bench/lme": "the private path of sources[0] (lme)"})
    assert [leak.code for leak in scanner.scan(f"root: {spelling}\n".encode(), binary=False)] == ["KB901"]


@pytest.mark.parametrize(
    "text",
    [
        '{"root": "//opt/bench//jos\\u00e9/x"}',  # json.dumps writes a non-ASCII letter so
        '{"root": "\\/opt\\/bench\\/\\/jos\\u00e9"}',  # (PHP's encoder: every '/' as '\/')
        "root=/opt/./bench/jos%C3%A9/x",
        "root: /opt/bench//jos&#233;/x",
    ],
    ids=["JSON escape", "JSON escaped slashes", "percent-encoded", "HTML reference"],
)
def test_a_private_path_with_extra_slashes_and_an_escape_is_found(text):
    # Each is one decoding away from the other: the view of an escape is read for its slashes too.
    from kitbuild.leaks import LeakScanner

    scanner = LeakScanner({"/opt/bench/josé": "the private path of sources[0] (josé)"})
    assert [leak.code for leak in scanner.scan(f"{text}\n".encode(), binary=False)] == ["KB901"]
    assert [leak.code for leak in scanner.scan(f"{text}\n".replace("jos", "jon").encode(), binary=False)] == []


@pytest.mark.parametrize("text", ["see https://example.org//opt/bench/x", "x = 1 // /opt/bench comment", "/opt/bench/../lme"])
def test_a_urls_or_a_comments_slashes_join_no_private_path(text):
    from kitbuild.leaks import LeakScanner

    scanner = LeakScanner({"/opt/bench/lme": "the private path of sources[0] (lme)"})
    assert scanner.scan(text.encode(), binary=False) == []


SPELLINGS = {
    "JavaScript's \\u{2f}": lambda s: s.replace("/", "\\u{2f}").replace("g", "\\u{67}"),
    "Python's \\U0000002f": lambda s: s.replace("/", "\\U0000002f").replace("g", "\\U00000067"),
    "C's octal \\057": lambda s: s.replace("/", "\\057").replace("g", "\\147"),
    "HTML's &#47 without ';'": lambda s: s.replace("/", "&#47").replace("g", "&#103"),
}


@pytest.mark.parametrize("spell", SPELLINGS.values(), ids=SPELLINGS)
@pytest.mark.parametrize("secret, code", [("/home/bob/runs", "KB501"), ("gpu07", "KB901")])
def test_a_secret_in_source_codes_other_escapes_is_found(spell, secret, code):
    from leaks_test import BUILD

    text = f'log("ran {spell(secret)} ok")\n'.encode()
    assert code in [c for c, _ in found(text, BUILD)]


@pytest.mark.parametrize("text", [b"C:\\data\\123\\run.txt", b"printf '%s\\n' \\101\\102", b"\\u{d800} \\U00110000 x", b"&#4712;&#1234567"])
def test_other_escapes_decode_to_nothing_private_by_chance(text):
    from leaks_test import BUILD

    assert found(text, BUILD) == []


# -- what UTF-16 and UTF-32 text around an escape shows is found where any read block ends --------


def _observed_in(data: bytes, cuts: list[int]) -> list[tuple[str, int, str]]:
    observer = Observer("r.txt", Plan())
    for start, end in zip([0, *cuts], [*cuts, len(data)]):
        observer.feed(data[start:end])
    return [(leak.code, leak.offset, leak.what) for leak in observer.finish().leaks]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-32-be"])
@pytest.mark.parametrize("gap", [3_000, 12_000, 24_000])
def test_wide_text_around_an_escape_is_read_the_same_wherever_a_block_ends(codec, gap):
    # The folded text around an escape ('&#x2f;' here) is read only as far from it as a
    # streamed window's context reaches, in bytes: once it reached 2 * 4,096 characters (32 KiB
    # of UTF-32), and whether the path after 'é' was found (its extra '/' read, the fold making 'é' no letter) hung
    # on where a block ended.
    width = 2 if "16" in codec else 4
    text = "x" * 50 + "é/home//ada/x " + "y" * (gap // width) + " &#x2f;tmp " + "z" * 30_000
    data = ("\ufeff" + text).encode(codec)
    whole = _observed_in(data, [])
    for cut in range(1, len(data), 1_999):
        assert _observed_in(data, [cut]) == whole, cut


def test_a_letter_is_no_length_where_the_string_it_would_measure_holds_what_text_does_not():
    # 'x' as Avro's zigzag (60 bytes) would end right before a byte no text file writes, but
    # those 60 bytes hold CBOR's 0xa1 after ASCII: 'xgpu07' is a cell of its own (a CBOR map's).
    data = b"in\xa1axh xgpu07 \xa1dpathx.gpu0701d9828_ 41294e608-f32f6746/33f-e406gg 7-\xa1axk/opt/tools"
    assert "KB901" not in [code for code, _ in found(data, BUILD)]
