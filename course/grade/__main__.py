"""`python -m course.grade`: grade a folder of submissions, or `merge` shard gradebooks."""
import sys

from course.grade.cli import main

sys.exit(main())
