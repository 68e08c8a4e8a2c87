# Shared by bench_real.R and bench_real_corpus.R: the configurations to run.
#
# select_configs(configs, which, defs): the named `configs` listed in `which` (all when
# NULL); a name not among them may be given as "key=value, key=value", meaning the package
# defaults plus those go_annotator() arguments (TRUE/FALSE, numbers, or else words such
# as `author_pseudocount=auto`), with the term texts `defs`; a leading "defaults" in such
# a name is allowed ("defaults, author_pseudocount=auto").
select_configs <- function(configs, which, defs) {
  if (is.null(which)) return(configs)
  parse_config <- function(cn) {
    parts <- trimws(strsplit(cn, ",", fixed = TRUE)[[1]])
    if (length(parts) > 1 && parts[1] == "defaults") parts <- parts[-1]
    kv <- strsplit(parts, "=", fixed = TRUE)
    if (!all(lengths(kv) == 2)) stop("unknown configuration: ", cn)
    vals <- lapply(kv, function(p) {
      v <- trimws(p[2])
      num <- suppressWarnings(as.numeric(v))
      if (v %in% c("TRUE", "FALSE")) as.logical(v) else if (!is.na(num)) num else v
    })
    list(defs = defs, args = stats::setNames(vals, trimws(vapply(kv, `[`, "", 1))))
  }
  lapply(stats::setNames(which, which), function(cn) {
    if (cn %in% names(configs)) configs[[cn]] else parse_config(cn)
  })
}

