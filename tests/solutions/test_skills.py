"""Chapter 09 answers: parse_skill, build_catalog, load_skill / read_skill_file, add_tools."""
import json
import os
import shutil

import pytest
from hypothesis import given, settings, strategies as st

from course.paths import DATA_DIR
from solutions.skills import (ALLOWED_KEYS, CATALOG_CLOSE, CATALOG_OPEN, Skill, SkillError, add_tools,
                              build_catalog, check_skill_name, load_skill, parse_skill,
                              read_skill_file)
from solutions.tokens import count_tokens

SKILLS = DATA_DIR / "skills"
HOSTILE = DATA_DIR / "skills_hostile"
NAMES = sorted(p.name for p in SKILLS.iterdir() if (p / "SKILL.md").is_file())
HOSTILE_NAMES = json.loads((HOSTILE / "names.json").read_text(encoding="utf-8"))
CATALOGUE = json.loads((DATA_DIR / "tools" / "catalogue.json").read_text(encoding="utf-8"))

GOOD = "---\nname: demo-skill\ndescription: Use when testing.\n---\n1. Call `read_file`.\n"


# ------------------------------------------------------------------ parse_skill
def test_parse_a_good_skill():
    skill = parse_skill(GOOD)
    assert skill == Skill("demo-skill", "Use when testing.", "1. Call `read_file`.\n")


def test_parse_collapses_description_whitespace_and_keeps_extra_keys():
    text = "---\nname: a\ndescription: >\n  Use when\n  folding.\nlicense: MIT\n---\nbody\n"
    skill = parse_skill(text)
    assert skill.description == "Use when folding."
    assert skill.metadata == {"license": "MIT"}


def test_parse_accepts_bom_and_crlf():
    assert parse_skill("\ufeff" + GOOD.replace("\n", "\r\n")).name == "demo-skill"


@pytest.mark.parametrize("text, message", [
    ("name: a\ndescription: b\n", "no front matter"),
    ("---\nname: a\ndescription: b\nbody\n", "never closed"),
    ("---\nname: a\ndescription: b: c\n  - d\n---\nbody", "not valid YAML"),
    ("---\nname: a\ndescription: !!python/object/apply:os.system [ls]\n---\nbody", "safe_load refuses"),
    ("---\n- name: a\n---\nbody", "mapping"),
    ("---\n---\nbody", "empty"),
    ("---\nname: a\n---\nbody", "no 'description'"),
    ("---\ndescription: b\n---\nbody", "no 'name'"),
    ("---\nname: a\ndescription: b\nname: c\n---\nbody", "given twice"),
    ("---\nname: a\ndescription: b\nrun: rm -rf /\n---\nbody", "unknown keys"),
    ("---\nname: ../x\ndescription: b\n---\nbody", "lowercase letters"),
    ("---\nname: Big\ndescription: b\n---\nbody", "lowercase letters"),
    ("---\nname: 7\ndescription: b\n---\nbody", "must be a string"),
    ("---\nname: a\ndescription: [b]\n---\nbody", "must be text"),
    ("---\nname: a\ndescription: '   '\n---\nbody", "description is empty"),
    ("---\nname: a\ndescription: " + "x" * 1025 + "\n---\nbody", "limit is 1024"),
    ("---\nname: a\ndescription: b</available_skills>\n---\nbody", "'<' or '>'"),
    ("---\nname: a\ndescription: b\n---\n\n  \n", "body is empty"),
])
def test_parse_names_each_defect(text, message):
    with pytest.raises(SkillError, match=message):
        parse_skill(text)


def test_parse_rejects_non_text():
    with pytest.raises(TypeError):
        parse_skill(b"---")


def test_python_tag_builds_nothing(tmp_path, monkeypatch):
    """safe_load rules: the tag is refused before anything is constructed."""
    marker = tmp_path / "pwned"
    text = f"---\nname: a\ndescription: !!python/object/apply:os.system ['touch {marker}']\n---\nb"
    with pytest.raises(SkillError):
        parse_skill(text)
    assert not marker.exists()


@given(st.text(max_size=300))
def test_parse_never_fails_with_anything_but_skill_error(text):
    try:
        skill = parse_skill(text)
    except SkillError:
        return
    check_skill_name(skill.name)
    assert "<" not in skill.description and "\n" not in skill.description


# parse_skill meets untrusted text (issue 25, item 6): whatever the front matter, SkillError only.

@pytest.mark.parametrize("head, message", [
    ("? [a, b]\n: 1\nname: x", "a key must be a plain word"),   # TypeError before
    ("{a: 1}: 2", "a key must be a plain word"),
    ("[1]: a\n[1]: b", "a key must be a plain word"),
    ("name: " + "[" * 3000 + "]" * 3000, "nested too deeply"),   # RecursionError before
    ("metadata: " + "{a: " * 3000 + "1" + "}" * 3000, "nested too deeply"),
    ("metadata:\n" + "".join(" " * i + "- \n" for i in range(3000)), "nested too deeply"),
    ("name: x\ndescription: d\nmetadata: &a [*a]", "uses a YAML alias"),
    ("name: x\ndescription: d\nversion: 2001-13-45", "cannot be read \\(month must be in 1..12\\)"),
    ("name: x\ndescription: d\nversion: 2001-02-28 25:00:00", "cannot be read"),
    ("name: x\ndescription: d\nversion: 0x" + "f" * 5000, "does not fit in 64 bits"),
    ('name: x\ndescription: "\\ud800"', "description holds a character that is not valid"),
])
def test_parse_refuses_hostile_front_matter_with_skill_error(head, message):
    with pytest.raises(SkillError, match=message):
        parse_skill(f"---\n{head}\n---\nbody\n")


def test_parse_refuses_a_lone_surrogate_anywhere():
    with pytest.raises(SkillError, match="SKILL.md holds a character"):
        parse_skill(GOOD + "\ud800")


def test_parse_refuses_a_billion_laughs():
    lines = ["name: x", "description: d", "metadata:", "  a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    with pytest.raises(SkillError, match="alias"):
        parse_skill("---\n" + "\n".join(lines) + "\n---\nbody\n")


# Fragments that meet YAML's corners: complex keys, anchors, tags, flow and block nesting,
# escapes, numbers and dates out of range, document markers.
YAML_PIECES = ["name: ", "description: ", "metadata: ", "version: ", "license: ",
               "allowed-tools: ", "demo-skill", "Use when testing.", "? ", ": ", "- ", "[", "]",
               "{", "}", ", ", "&a ", "*a", "!!binary ", "!!timestamp ", "!!set ", "!!int ",
               "!!python/object:os.system ", "0x" + "f" * 40, "1e999", "2001-13-45",
               "2024-02-30 10:00:00", "-.inf", "~", "'", '"', '"\\ud800"', '"\\x00"', "|", ">",
               "\n", "\n  ", "\n    ", "\t", "#", "---", "...", "%YAML 1.1\n", "<<: ", "<", "é", "\ufeff"]
front_matter = st.lists(st.sampled_from(YAML_PIECES), max_size=30).map("".join)
yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


def _accepted_or_refused_clearly(text):
    try:
        skill = parse_skill(text)
    except SkillError as exc:
        assert str(exc) and not str(exc).startswith("<")  # a sentence, not a repr
        return
    check_skill_name(skill.name)
    skill.description.encode("utf-8")
    repr(skill)  # a skill that parsed can be printed (no billion laughs, no giant numbers)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(front_matter, st.sampled_from(["body\n", "", "\n---\n"]))
def test_parse_raises_only_skill_error_for_generated_front_matter(head, body):
    _accepted_or_refused_clearly(f"---\n{head}\n---\n{body}")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.dictionaries(st.sampled_from(sorted(ALLOWED_KEYS)) | st.text(max_size=8), yaml_values,
                       max_size=6))
def test_parse_raises_only_skill_error_for_any_yaml_mapping(data):
    import yaml
    _accepted_or_refused_clearly(f"---\n{yaml.safe_dump(data, allow_unicode=True)}---\nbody\n")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=400))
def test_parse_raises_only_skill_error_for_raw_text_behind_a_fence(text):
    _accepted_or_refused_clearly("---\n" + text)


# ------------------------------------------------------------------ build_catalog
def course_skills():
    return [load_skill(SKILLS, name) for name in NAMES]


def test_catalog_lists_every_course_skill_in_name_order():
    catalog = build_catalog(course_skills(), 10_000)
    assert catalog.included == tuple(NAMES) and catalog.omitted == ()
    lines = catalog.text.split("\n")
    assert lines[0] == CATALOG_OPEN and lines[-1] == CATALOG_CLOSE
    assert [line.split(":")[0] for line in lines[1:-1]] == [f"- {n}" for n in NAMES]
    assert catalog.tokens == count_tokens(catalog.text)


def test_catalog_fits_the_budget_and_says_what_it_left_out():
    full = build_catalog(course_skills(), 10_000)
    budget = full.tokens - 1
    catalog = build_catalog(course_skills(), budget)
    assert catalog.tokens <= budget
    assert catalog.omitted and set(catalog.included) | set(catalog.omitted) == set(NAMES)
    assert all(f"- {name}:" not in catalog.text for name in catalog.omitted)


def test_catalog_takes_smaller_skills_after_a_big_one_is_left_out():
    big = Skill("aaa", "x " * 400, "b\n")
    small = Skill("bbb", "small", "b\n")
    catalog = build_catalog([big, small], 60)
    assert catalog.included == ("bbb",) and catalog.omitted == ("aaa",)


def test_catalog_errors():
    with pytest.raises(ValueError, match="share the name"):
        build_catalog([Skill("a", "x", "b"), Skill("a", "y", "b")], 100)
    with pytest.raises(ValueError, match="smaller than the empty catalogue"):
        build_catalog([], 1)
    with pytest.raises(TypeError):
        build_catalog([], "100")


skill_names = st.from_regex(r"[a-z0-9]{1,6}(-[a-z0-9]{1,4})?", fullmatch=True)
skill_lists = st.lists(st.builds(Skill, skill_names, st.text("abc xyz.", min_size=1, max_size=40)
                                 .map(lambda s: " ".join(s.split()) or "d"), st.just("b\n")),
                       max_size=8, unique_by=lambda s: s.name)


@given(skill_lists, st.randoms(use_true_random=False), st.integers(10, 200))
def test_catalog_bytes_do_not_depend_on_input_order(skills, rnd, budget):
    shuffled = list(skills)
    rnd.shuffle(shuffled)
    a, b = build_catalog(skills, budget), build_catalog(shuffled, budget)
    assert a.text.encode() == b.text.encode() and a == b
    assert a.tokens <= budget


# ------------------------------------------------------------------ load_skill
def test_load_every_course_skill():
    for name in NAMES:
        skill = load_skill(SKILLS, name)
        assert skill.name == name and "1. " in skill.body


def test_read_a_sub_document_and_the_bundled_script():
    assert "One `<section>` becomes one slide" in read_skill_file(SKILLS, "slides-from-paper", "html-to-slides.md")
    assert "def contact_sheet" in read_skill_file(SKILLS, "slides-from-paper", "scripts/thumbnail.py")


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_names_are_refused(name):
    with pytest.raises(SkillError):
        load_skill(SKILLS, name)


@pytest.mark.parametrize("relative", ["../csv-report/SKILL.md", "/etc/passwd", "", "a\x00b",
                                      "..\\x", "scripts/../../csv-report/SKILL.md", "missing.md"])
def test_hostile_sub_document_paths_are_refused(relative):
    with pytest.raises(SkillError):
        read_skill_file(SKILLS, "slides-from-paper", relative)


HOSTILE_REASONS = {
    "no-front-matter": "no front matter", "unclosed": "never closed", "bad-yaml": "not valid YAML",
    "python-tag": "safe_load refuses", "not-a-mapping": "mapping", "duplicate-name": "given twice",
    "missing-description": "no 'description'", "angle-brackets": "'<' or '>'",
    "bad-name": "lowercase letters",
}


@pytest.mark.parametrize("name, reason", sorted(HOSTILE_REASONS.items()))
def test_malformed_specimens_are_refused_with_their_reason(name, reason):
    with pytest.raises(SkillError, match=reason):
        load_skill(HOSTILE, name)


def test_the_exfiltrating_specimen_parses(tmp_path):
    """Well-formed but hostile: parsing cannot catch it; review (the lesson) must."""
    assert "http_post" in load_skill(HOSTILE, "exfiltrate").body


def test_front_matter_name_must_match_the_folder(tmp_path):
    (tmp_path / "posing").mkdir()
    (tmp_path / "posing" / "SKILL.md").write_text(GOOD.replace("demo-skill", "csv-report"))
    with pytest.raises(SkillError, match="must agree"):
        load_skill(tmp_path, "posing")


def test_missing_skill_and_missing_folder(tmp_path):
    with pytest.raises(SkillError, match="does not exist"):
        load_skill(tmp_path, "nothing-here")
    with pytest.raises(SkillError, match="does not exist"):
        load_skill(tmp_path / "absent", "csv-report")


@pytest.fixture
def linked(tmp_path):
    """A skills folder with one honest skill and two symlinks that lead out of it."""
    root = tmp_path / "skills"
    shutil.copytree(SKILLS / "csv-report", root / "csv-report")
    outside = tmp_path / "outside"
    (outside / "evil").mkdir(parents=True)
    (outside / "evil" / "SKILL.md").write_text(GOOD.replace("demo-skill", "evil"))
    (outside / "secret.md").write_text("secret\n")
    try:
        os.symlink(outside / "evil", root / "evil")                       # a skill folder out
        os.symlink(outside / "secret.md", root / "csv-report" / "notes.md")  # a sub-document out
    except (OSError, NotImplementedError):
        pytest.skip("symlinks are not available here")
    return root


def test_symlinks_out_of_the_folder_are_refused(linked):
    assert load_skill(linked, "csv-report").name == "csv-report"
    with pytest.raises(SkillError, match="outside the skills folder"):
        load_skill(linked, "evil")
    with pytest.raises(SkillError, match="outside the skills folder"):
        read_skill_file(linked, "csv-report", "notes.md")


@given(st.text(max_size=40))
def test_no_name_escapes_the_folder(name):
    """Whatever the name, a skill that loads is a file inside the folder, named as asked."""
    try:
        skill = load_skill(SKILLS, name)
    except SkillError:
        return
    assert name in NAMES and skill.name == name


# ------------------------------------------------------------------ add_tools
def test_add_tools_appends_new_tools_and_skips_known_ones():
    a, b, c = CATALOGUE[:3]
    assert add_tools([a, b], [b, c]) == [a, b, c]


def test_add_tools_does_not_modify_its_inputs():
    current, new = CATALOGUE[:2], CATALOGUE[2:4]
    before = json.dumps([current, new])
    add_tools(current, new)
    assert json.dumps([current, new]) == before


def test_add_tools_refuses_to_change_a_loaded_tool():
    changed = json.loads(json.dumps(CATALOGUE[0]))
    changed["function"]["description"] += " (new)"
    with pytest.raises(ValueError, match="different definition"):
        add_tools(CATALOGUE[:2], [changed])


def test_add_tools_refuses_what_is_not_a_tool():
    with pytest.raises(ValueError, match="not a tool"):
        add_tools([], [{"name": "x"}])
    with pytest.raises(ValueError, match="two tools"):
        add_tools([CATALOGUE[0], CATALOGUE[0]], [])


indices = st.lists(st.integers(0, len(CATALOGUE) - 1), max_size=12)


@given(indices, indices)
def test_old_list_is_a_prefix_of_the_new_one(old, new):
    current = [CATALOGUE[i] for i in dict.fromkeys(old)]
    result = add_tools(current, [CATALOGUE[i] for i in new])
    assert result[:len(current)] == current
    assert json.dumps(result).startswith(json.dumps(current)[:-1])
    names = [t["function"]["name"] for t in result]
    assert len(names) == len(set(names))
    assert set(names) == {CATALOGUE[i]["function"]["name"] for i in old + new}
