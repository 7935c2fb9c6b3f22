"""Hostile inputs to kit.yaml and rule files: each is refused with exit 2 at its place, never a
hang, an internal error or a private path in the message (docs/config.md, 'Every key')."""

from __future__ import annotations

import os
import re
import threading

import pytest

from kitbuild.config import load_config
from kitbuild.errors import ConfigError
from kitbuild.schema import first_schema_problem, load_schema
from kitbuild.yamlfile import MAX_BYTES, load_yaml

BASE = """\
kit: tiny
title: A tiny kit
date: 2026-11-09
sources:
  - path: src
    as: run
rules:
  - use: record-path-to-kit-path
    with:
      map: {/home/alice/bench/src: run}
  - use: box-name-to-role
    with:
      names: {box-alice: desktop}
"""


@pytest.fixture
def tiny(bench, make_files):
    make_files(bench, {"src": {"run.json": '{"host": "box-alice"}\n'}})
    return bench


def refused(text: str) -> str:
    with open("kit.yaml", "w", encoding="utf-8") as f:
        f.write(text)
    with pytest.raises(ConfigError) as err:
        load_config("kit.yaml")
    return err.value.message


# -- 1. not a regular file, or far too large ------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_kit_yaml_is_refused_without_blocking(tiny):
    os.mkfifo("kit.yaml")
    caught: list[BaseException] = []

    def load() -> None:
        try:
            load_config("kit.yaml")
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            caught.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader, then fail
        with open("kit.yaml", "w"):
            pass
        pytest.fail("load_config blocked on a FIFO")
    assert isinstance(caught[0], ConfigError) and "not a regular file" in str(caught[0])


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_as_kit_yaml_is_refused_unread(tiny):
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config("/dev/zero")


def test_a_kit_yaml_past_the_size_limit_is_refused(tiny):
    message = refused(BASE + "summary: " + "x" * MAX_BYTES + "\n")
    assert "larger than" in message


def test_a_folder_as_kit_yaml_is_still_named_a_folder(tiny):
    os.mkdir("k.yaml")
    with pytest.raises(ConfigError, match="is a folder"):
        load_config("k.yaml")
