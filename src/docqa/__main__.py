"""python -m docqa"""

from docqa.cli import main

main()
