# Shell helpers for scripts that write corpus.toml files over Debian's text packages; source it.
# toml_list A B ...   -> "A","B",...   (a TOML array's body)
# fortune_files DIR [find options...] -> the fortune record files under DIR, sorted: not the
#                                        *.dat indexes, not the *.u8 duplicates, not empty files
toml_list() { for p in "$@"; do printf '"%s",' "$p"; done | sed 's/,$//'; }
fortune_files() {
  local dir=$1; shift
  find "$dir" "$@" -type f ! -name '*.dat' ! -name '*.u8' -size +0 | sort
}
