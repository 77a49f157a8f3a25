#!/usr/bin/env python3
"""case_rows.py: the rows of the Check programs' case tables, for
tests/consistency.sh.

Reads every tests/check_*.c under the source folder given as argument and
prints one line per row of a case table (tests/harness.h):

    WANT OAC_ALIAS_CYCLE tests/check_alias_rules.c:cases:self_alias
    NEAR OAC_ALIAS_CYCLE tests/check_alias_classes.c:cases:chain_acyclic

A case table is `static const model_case NAME[] = { ... };` or the same
with scene_case, outside comments.  Only tables that are run count: the
file must hold CASES_TEST(NAME) and ADD_CASES(tc, NAME), and its program
must be in TESTS of Makefile.am.  A row that does not start with
{ "name", function, WANT(OAC_X) or NEAR(OAC_X) is an error, as is a table
that is not run.  Errors go to standard output as "FAIL: ..." lines and
make the exit status 1.  Comments and string contents are never read as
rows or registrations, so a code named in a comment counts for nothing.
"""
import pathlib
import re
import sys

TOKEN = re.compile(r'''
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])+')
''', re.S | re.X)


def strip(src):
    """Comments become a space; strings keep their text (row names) but
    are masked where rows and registrations are searched."""
    code, masked = [], []
    pos = 0
    for m in TOKEN.finditer(src):
        code.append(src[pos:m.start()])
        masked.append(src[pos:m.start()])
        if m.group('comment'):
            keep = ' ' + '\n' * m.group().count('\n')
            code.append(keep)
            masked.append(keep)
        else:
            code.append(m.group())
            masked.append('"' + ' ' * (len(m.group()) - 2) + '"')
        pos = m.end()
    code.append(src[pos:])
    masked.append(src[pos:])
    return ''.join(code), ''.join(masked)


TABLE = re.compile(r'\bstatic\s+const\s+(model_case|scene_case)\s+(\w+)\s*\[\s*\]\s*=\s*\{')
ROW = re.compile(r'^\s*"([^"]*)"\s*,\s*(\w+)\s*,\s*(WANT|NEAR)\s*\(\s*(OAC_[A-Z0-9_]+)\s*\)')


def rows_of(code, masked, start):
    """The rows (text of each top-level {...}) of the table whose body
    opens at `start` (just after its '{'), and where the body ends."""
    depth, rows, row_start, i = 1, [], None, start
    while i < len(masked) and depth:
        c = masked[i]
        if c == '{':
            depth += 1
            if depth == 2:
                row_start = i + 1
        elif c == '}':
            depth -= 1
            if depth == 1:
                rows.append(code[row_start:i])
        i += 1
    return rows, i


def main():
    top = pathlib.Path(sys.argv[1])
    makefile = (top / 'Makefile.am').read_text()
    tests = set(re.findall(r'\btests/check_\w+', ' '.join(
        m.group(1) for m in re.finditer(r'^(?:TESTS|OAC_SUITES)\s*\+?=((?:.*\\\n)*.*)$', makefile, re.M))))
    fail = 0
    for path in sorted((top / 'tests').glob('check_*.c')):
        rel = 'tests/' + path.name
        code, masked = strip(path.read_text())
        for m in TABLE.finditer(masked):
            kind, name = m.group(1), m.group(2)
            rows, _ = rows_of(code, masked, m.end())
            run = (re.search(r'\bCASES_TEST\s*\(\s*%s\s*\)' % name, masked) and
                   re.search(r'\bADD_CASES\s*\(\s*\w+\s*,\s*%s\s*\)' % name, masked))
            if not run:
                print('FAIL: %s: %s table %s is not run (CASES_TEST and ADD_CASES)'
                      % (rel, kind, name))
                fail = 1
                continue
            if rel[:-2] not in tests:
                print('FAIL: %s: its program %s is not in TESTS (or OAC_SUITES) of Makefile.am'
                      % (rel, rel[:-2]))
                fail = 1
                continue
            for row in rows:
                r = ROW.match(row)
                if not r:
                    print('FAIL: %s: a row of %s names no WANT(code) or NEAR(code): {%s}'
                          % (rel, name, ' '.join(row.split())[:80]))
                    fail = 1
                    continue
                print('%s %s %s:%s:%s' % (r.group(3), r.group(4), rel, name, r.group(1)))
    return fail


if __name__ == '__main__':
    sys.exit(main())
