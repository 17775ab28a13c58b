"""python -m lesson_support.memory: measure the recall benchmark again (recorded.py)."""
from lesson_support.memory.recorded import main

main()
