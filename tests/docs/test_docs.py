"""The README and docs/ stay navigable: links resolve, named build.sh commands exist, the README stays short.

Fast and offline: reads the Markdown files and build.sh, runs nothing.
"""
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
# The one page that keeps dated runs and the work items they served.
HISTORY = ROOT / "docs" / "performance-log.md"
README_MAX_LINES = 250

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
# [text](target) and ![alt](target); the target ends at whitespace (an optional "title" follows) or ")".
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
BUILD_SH = re.compile(r"\./build\.sh[ \t]+([a-z][a-z0-9-]*)(?:[ \t]+([a-z][a-z0-9-]*))?")
WORK_ITEM = re.compile(r"\bissues?[ \t]+#?\d+|(?<![\w&/#])#\d+\b", re.IGNORECASE)


def rel(path):
    return path.relative_to(ROOT).as_posix()


def without_code_blocks(text):
    """The text with fenced code blocks blanked out (line numbers kept): links there are examples, not links."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def github_slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a linked heading keeps its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(path):
    """Every heading anchor of a Markdown file, repeated slugs numbered as GitHub does (x, x-1, x-2)."""
    seen, result = {}, set()
    for match in HEADING.finditer(without_code_blocks(path.read_text())):
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def relative_links(path):
    text = INLINE_CODE.sub("", without_code_blocks(path.read_text()))
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto: ...
            continue
        yield target


def build_sh_case(function):
    """The words a `case` in build.sh's FUNCTION accepts (its `word)` and `a|b)` labels)."""
    script = (ROOT / "build.sh").read_text()
    body = re.search(rf"^{function}\(\) \{{\n(.*?)^\}}", script, re.MULTILINE | re.DOTALL)
    assert body, f"build.sh has no function {function}()"
    labels = re.findall(r"^[ \t]+([a-z][a-z0-9|-]*)\)", body.group(1), re.MULTILINE)
    return {word for label in labels for word in label.split("|")}


COMMANDS = build_sh_case("main")
BUILD_STEPS = build_sh_case("cmd_build")


def test_build_sh_cases_are_read():
    assert {"setup", "build", "serve", "test", "help"} <= COMMANDS
    assert {"kernels", "wheel", "pyodide-lock"} <= BUILD_STEPS


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_relative_links_resolve(page):
    broken = []
    for target in relative_links(page):
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {rel(linked)}")
    assert not broken, f"{rel(page)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_named_build_sh_commands_exist(page):
    unknown = []
    for command, step in BUILD_SH.findall(page.read_text()):
        if command not in COMMANDS:
            unknown.append(f"./build.sh {command}")
        elif command == "build" and step and step not in BUILD_STEPS:
            unknown.append(f"./build.sh build {step}")
    assert not unknown, f"{rel(page)} names what build.sh does not have: {sorted(set(unknown))}"


def test_readme_is_short():
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; details belong in docs/"


@pytest.mark.parametrize("page", [p for p in PAGES if p != HISTORY], ids=rel)
def test_no_work_item_numbers(page):
    found = [m.group(0) for m in WORK_ITEM.finditer(page.read_text())]
    assert not found, f"{rel(page)} speaks of work items {found}: dated history goes to {rel(HISTORY)}"


def test_checks_catch_what_they_look_for(tmp_path):
    """The patterns above really match: a broken link, a repeated heading, a work item."""
    page = tmp_path / "page.md"
    page.write_text("# A `b` c!\n## A b c\n[x](missing.md) [y](#a-b-c-1) `[z](code.md)`\n")
    assert list(relative_links(page)) == ["missing.md", "#a-b-c-1"]
    assert anchors(page) == {"a-b-c", "a-b-c-1"}
    assert WORK_ITEM.search("as issue 10 asks") and WORK_ITEM.search("see #14.")
    assert not WORK_ITEM.search("[x](#anchor) and &#8212;")
    assert BUILD_SH.findall("./build.sh build pyodide-lock") == [("build", "pyodide-lock")]
