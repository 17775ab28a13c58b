# The course's pytest options for labs (--lab-mode=solved|unsolved|grade); see course/pytest_plugin.py.
pytest_plugins = ["course.pytest_plugin"]
