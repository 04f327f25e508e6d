"""The README's examples stay true: each code block that says which file it shows is that file's
text, the Python example runs and checks its own result (ctest's quickstart_cc runs the C++
one), the README stays short, and the links of the README and docs/ name files that exist."""
import glob
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = ("examples/quickstart.cc", "examples/quickstart.py")


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def shown_blocks(markdown):
    """{path: text} of each fenced block whose non-empty line above links to `path` (its last
    link)."""
    blocks = {}
    for m in re.finditer(r"^([^\n]*\S[^\n]*)\n+```[^\n]*\n(.*?)^```", markdown, re.M | re.S):
        links = re.findall(r"\]\(([^)\s]+)\)", m.group(1))
        if links:
            blocks[links[-1]] = m.group(2)
    return blocks


class ReadmeTest(unittest.TestCase):
    def test_each_example_block_is_its_file(self):
        blocks = shown_blocks(read("README.md"))
        for path in EXAMPLES:
            with self.subTest(path=path):
                self.assertIn(path, blocks, f"README.md shows no block for {path}")
                self.assertEqual(blocks[path], read(path),
                                 f"README.md's block differs from {path}: copy the file into it")

    def test_the_python_example_runs_and_checks_itself(self):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "quickstart.py")],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ok", r.stdout)

    def test_the_readme_is_short(self):
        lines = read("README.md").count("\n")
        self.assertLessEqual(lines, 200, "README.md: move reference material into docs/")

    def test_links_name_files_that_exist(self):
        for md in ["README.md"] + sorted(os.path.relpath(p, ROOT)
                                         for p in glob.glob(os.path.join(ROOT, "docs", "*.md"))):
            for target in re.findall(r"\]\(([^)\s]+)\)", read(md)):
                if re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue
                path = os.path.join(ROOT, os.path.dirname(md), target.split("#")[0])
                with self.subTest(md=md, link=target):
                    self.assertTrue(os.path.exists(path), f"{md} links to {target}: no such file")


if __name__ == "__main__":
    unittest.main()
