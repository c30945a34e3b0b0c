#!/usr/bin/env bash
# The repository stands alone: no tracked file may send a reader to a document that is not in
# it (the team's DESIGN.md, STACK.md or STYLE.md) or to a tracker entry ("the learning issue",
# "issue 12"). What a reader needs belongs in docs/, and comments cite files inside the
# repository. Prints each offending line and fails if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
self=scripts/check-standalone.sh
documents='\b(DESIGN|STACK|STYLE)\.md\b'
issues='\bthe +([A-Za-z0-9_’'\''-]+ +){0,3}issue\b|\bissues? +#?[0-9]+\b'
scan() { git ls-files -z | grep -zv "^${self}\$" | xargs -0 grep -nI "$@" -- || true; }
found=$( (scan -E "$documents"; scan -iE "$issues") | sort -u)
if [ -n "$found" ]; then
  echo "$found"
  echo
  echo "$(printf '%s\n' "$found" | wc -l) line(s) cite documents or issues outside the repository: write what the reader needs into docs/ and cite that." >&2
  exit 1
fi
echo "the repository stands alone: no citation of DESIGN.md, STACK.md, STYLE.md or an issue"
