"""The headless-Chromium helper (tests/browser.py) on tiny pages: load, console errors, requests, screenshots."""
import base64
import struct
import zlib

import pytest

from browser import BrowserError, Chromium, JavaScriptError, chromium_path

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="no chromium/chromium-browser/google-chrome on PATH")


def png_bytes(width, height, rgb=(200, 30, 30)):
    """A tiny solid-colour PNG, built by hand."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def browser():
    with Chromium() as b:
        yield b


def page_file(tmp_path, body, name="page.html"):
    path = tmp_path / name
    path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>t</title></head><body>{body}</body></html>")
    return path


@pytest.mark.slow
def test_image_table_and_screenshots(browser, tmp_path):
    image = "data:image/png;base64," + base64.b64encode(png_bytes(4, 3)).decode()
    rows = "".join(f"<tr><td>{i}</td><td>row {i}</td></tr>" for i in range(60))  # taller than the viewport
    page = browser.open(page_file(tmp_path, f"<img id=i src='{image}'><table id=t>{rows}</table>"),
                        width=640, height=480)
    assert page.console_errors == []
    assert page.evaluate("document.getElementById('i').naturalWidth") == 4
    assert page.evaluate("document.querySelectorAll('#t tr').length") == 60
    assert page.evaluate("Promise.resolve(6 * 7)") == 42
    assert all(url.startswith(("file:", "data:")) for url in page.requests)
    assert page.requests[0].endswith("/page.html")

    full_height = page.evaluate("document.documentElement.scrollHeight")
    assert full_height > 480
    assert png_size(page.screenshot(tmp_path / "full.png")) == (640, full_height)
    assert png_size(page.screenshot(tmp_path / "view.png", full_page=False)) == (640, 480)


@pytest.mark.slow
def test_console_error_and_uncaught_exception(browser, tmp_path):
    page = browser.open(page_file(tmp_path, "<script>console.error('boom')</script>", "a.html"))
    assert any("boom" in e for e in page.console_errors), page.console_errors

    page = browser.open(page_file(tmp_path, "<script>throw new Error('x-marks-the-spot')</script>", "b.html"))
    assert any("x-marks-the-spot" in e for e in page.console_errors), page.console_errors

    page = browser.open(page_file(tmp_path, "<script>console.assert(1 === 2, 'broken')</script>", "c.html"))
    assert any("broken" in e for e in page.console_errors), page.console_errors


def test_missing_image_is_reported(browser, tmp_path):
    page = browser.open(page_file(tmp_path, "<img id=i src='missing.png'>"))
    assert any("missing.png" in e for e in page.console_errors), page.console_errors
    assert page.evaluate("document.getElementById('i').naturalWidth") == 0
    assert any(url.endswith("/missing.png") for url in page.requests)


def test_network_requests_are_recorded(browser, tmp_path):
    page = browser.open(page_file(tmp_path, "<script src='https://example.invalid/x.js'></script>"))
    assert "https://example.invalid/x.js" in page.requests
    assert not all(url.startswith(("file:", "data:")) for url in page.requests)


def test_evaluate_raises_on_exception(browser, tmp_path):
    page = browser.open(page_file(tmp_path, "<p>hi</p>"))
    assert page.evaluate("document.querySelector('p').textContent") == "hi"
    with pytest.raises(JavaScriptError, match="nope"):
        page.evaluate("(() => { throw new Error('nope') })()")
    with pytest.raises(JavaScriptError):
        page.evaluate("Promise.reject(new Error('nope'))")


def test_missing_file_is_a_clear_error(browser, tmp_path):
    with pytest.raises(BrowserError, match="ERR_FILE_NOT_FOUND"):
        browser.open(tmp_path / "no-such-page.html")


def test_page_close(browser, tmp_path):
    page = browser.open(page_file(tmp_path, "<p>bye</p>"))
    assert page.evaluate("undefined") is None
    page.close()
    assert page.session_id not in browser._pages


def test_browser_exiting_early_is_a_clear_error(tmp_path):
    fake = tmp_path / "fake-chromium"
    fake.write_text("#!/bin/sh\necho 'cannot start: doomed' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(BrowserError, match="doomed"):
        with Chromium(str(fake)):
            pass


@pytest.mark.slow
def test_missing_executable_is_a_clear_error(tmp_path):
    with pytest.raises(BrowserError, match="cannot start"):
        with Chromium(str(tmp_path / "no-such-chromium")):
            pass
