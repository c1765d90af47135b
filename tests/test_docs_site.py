"""The docs site (mkdocs.yml): every page in the navigation and linked from the README, and
a strict build in which every page, each finding's included, can be reached by links."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag

import pytest

from gradprobe import _pages

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"

pytestmark = pytest.mark.skipif(not CONFIG.is_file(), reason="not a source checkout")


def _config() -> dict:  # type: ignore[type-arg]
    yaml = pytest.importorskip("yaml")
    config: dict = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))  # type: ignore[type-arg]
    return config


def _nav_pages(entries: object) -> list[str]:
    if isinstance(entries, str):
        return [entries] if entries.endswith(".md") else []
    if isinstance(entries, list):
        return [page for entry in entries for page in _nav_pages(entry)]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in _nav_pages(value)]
    return []


def _pages_on_disk() -> set[str]:
    return {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}


def test_every_page_is_in_the_navigation_or_reached_from_the_codes_index() -> None:
    config = _config()
    nav = _nav_pages(config["nav"])
    assert len(nav) == len(set(nav)), "a page is in the navigation twice"
    assert set(nav) <= _pages_on_disk(), "the navigation names a page that does not exist"
    unlisted = [line for line in config["not_in_nav"].splitlines() if line.strip()]
    assert unlisted == ["findings/gp*.md"]  # only the finding pages, listed by findings.md
    rest = {page for page in _pages_on_disk() if not fnmatch.fnmatch(page, "findings/gp*.md")}
    assert rest == set(nav), "pages missing from mkdocs.yml's nav: " + ", ".join(
        sorted(rest - set(nav))
    )
    index = (DOCS / "findings.md").read_text(encoding="utf-8")
    for code in _pages.page_codes():
        assert f"(findings/{code.lower()}.md)" in index, code


def test_the_readme_links_every_page_and_its_use_section_the_guides() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/([\w./-]+\.md)\)", readme))
    nav = set(_nav_pages(_config()["nav"])) - {"index.md"}  # the README is the repo's index
    assert nav <= linked, "pages the README does not link: " + ", ".join(sorted(nav - linked))
    use = readme.split("\n## Use\n", 1)[1].split("\n## ", 1)[0]
    for page in ("blame.md", "watch.md", "hooks.md", "testing.md"):
        assert f"](docs/{page})" in use, page
    assert "gradprobe explain GP101" in use and "--sarif" in use


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "href" and value and tag == "a":
                self.hrefs.append(value)


def _reachable(site: Path) -> set[Path]:
    """The HTML pages reached by following links from the home page."""
    seen: set[Path] = set()
    pending = [site / "index.html"]
    while pending:
        page = pending.pop()
        if page in seen or not page.is_file():
            continue
        seen.add(page)
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for href in parser.hrefs:
            target, _ = urldefrag(href)
            if not target or "://" in target or target.startswith(("mailto:", "#")):
                continue
            resolved = Path(os.path.normpath(page.parent / unquote(target)))
            if resolved.is_dir() or target.endswith("/"):
                resolved = resolved / "index.html"
            if resolved.suffix == ".html":
                pending.append(resolved)
    return seen


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    return out


def test_the_site_builds_with_warnings_as_errors_and_every_page_is_reachable(site: Path) -> None:
    pages = {path for path in site.rglob("*.html") if path.name != "404.html"}
    assert pages == _reachable(site) & pages, "pages no link leads to: " + ", ".join(
        sorted(str(p.relative_to(site)) for p in pages - _reachable(site))
    )
    for code in _pages.page_codes():
        assert (site / "findings" / code.lower() / "index.html").is_file(), code
    assert not list(site.rglob("*.py")), "the generators are not part of the site"


def test_the_api_reference_renders_every_public_name(site: Path) -> None:
    import gradprobe

    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in gradprobe.__all__:
        if name != "__version__":
            assert f'id="gradprobe.{name}"' in page, name
    assert 'id="gradprobe.hooks.inventory"' in page
    assert 'id="gradprobe.testing.assert_grad_flows"' in page
    # doctests render as code, not as loose text with Sphinx roles
    assert "&gt;&gt;&gt;" in page and ":class:" not in page
