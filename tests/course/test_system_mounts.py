"""The host mounts every bubblewrap sandbox in the course starts from."""
import os

from course.system_mounts import SYSTEM_DIRS, system_mounts


def triples(args):
    """The arguments as (flag, source, destination) triples (every flag here takes two)."""
    assert len(args) % 3 == 0
    return [tuple(args[i:i + 3]) for i in range(0, len(args), 3)]


def test_usr_comes_first_and_each_top_level_name_is_mirrored_as_the_host_has_it():
    mounts = triples(system_mounts())
    assert mounts[0] == ("--ro-bind", "/usr", "/usr")
    for name in SYSTEM_DIRS:
        host = "/" + name
        if os.path.islink(host):
            assert ("--symlink", os.readlink(host), host) in mounts
        elif os.path.isdir(host):
            assert ("--ro-bind", host, host) in mounts
        else:
            assert all(dest != host for _, _, dest in mounts)


def test_a_file_is_bound_read_only_only_where_the_host_has_it(tmp_path):
    present = tmp_path / "present.conf"
    present.write_text("x\n", encoding="utf-8")
    mounts = triples(system_mounts((str(present), str(tmp_path / "absent.conf"))))
    assert mounts[-1] == ("--ro-bind", str(present), str(present))
    assert all("absent" not in dest for _, _, dest in mounts)
