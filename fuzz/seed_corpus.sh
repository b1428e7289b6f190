#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/seed-* from the project's scenario files
# (runtime/tests/scenarios/**/*.yaml):
#   conf_parse      the `conf:` text of each scenario, plus Volcano's default conf
#   decode_objects  the `cluster:` text of each scenario (first byte 0x00 = YAML mode)
#   quantity        every quantity in the scenarios' resource lists, plus edge cases
# Deterministic: the same scenarios give the same files. The seeds are committed; what the
# fuzzer adds to the corpus directories is ignored by fuzz/.gitignore.
# Usage: fuzz/seed_corpus.sh   (from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
scenarios="$here/../runtime/tests/scenarios"
corpus="$here/corpus"
mkdir -p "$corpus/conf_parse" "$corpus/decode_objects" "$corpus/quantity"
rm -f "$corpus"/conf_parse/seed-* "$corpus"/decode_objects/seed-* "$corpus"/quantity/seed-*

# block KEY FILE: the text of the top-level literal block `KEY: |` (two-space indent removed).
block() {
  awk -v key="$1" '
    $0 ~ "^" key ": *[|]" { on = 1; next }
    on && /^[^ ]/ { on = 0 }
    on { sub(/^  /, ""); print }
  ' "$2"
}

while IFS= read -r f; do
  rel="${f#"$scenarios"/}"
  id="$(printf '%s' "${rel%.yaml}" | tr '/' '-')"
  conf="$(block conf "$f")"
  if [ -n "$conf" ]; then
    printf '%s\n' "$conf" > "$corpus/conf_parse/seed-$id"
  fi
  cluster="$(block cluster "$f")"
  if [ -n "$cluster" ]; then
    { printf '\0'; printf '%s\n' "$cluster"; } > "$corpus/decode_objects/seed-$id"
  fi
done < <(find "$scenarios" -name '*.yaml' | LC_ALL=C sort)

cat > "$corpus/conf_parse/seed-volcano-default" <<'EOF'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
EOF

# Quantities: values of resource keys in the scenarios, then the grammar's edge cases.
{
  grep -rhoE "^ +(cpu|memory|pods|ephemeral-storage|nvidia\.com/gpu|hugepages-[0-9A-Za-z]+): *['\"]?[-+.0-9][^'\" ]*" "$scenarios" \
    | sed -E "s/^[^:]+: *['\"]?//"
  printf '%s\n' 0 1 100m 0.5 .5 1. +2 -1 1k 1Ki 1.5Gi 4G 1e3 1E3 1.5E2 2e-3 1e-9 0.0001 7Ei 8Ei \
    9223372036854775807 9223372036854775808 -9223372036854775808 1e19 1e-999999999999 abc 1ki 1e
} | LC_ALL=C sort -u | while IFS= read -r q; do
  name="$(printf '%s' "$q" | tr -c 'A-Za-z0-9.+-' '_')"
  printf '%s' "$q" > "$corpus/quantity/seed-$name"
done

for t in conf_parse decode_objects quantity; do
  echo "$t: $(find "$corpus/$t" -name 'seed-*' | wc -l) seeds"
done
