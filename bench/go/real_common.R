# Shared by bench_real.R and bench_real_corpus.R: the configurations to run.
#
# select_configs(configs, which, defs): the named `configs` listed in `which` (all when
# NULL); a name not among them may be given as "key=value, key=value", meaning the package
# defaults plus those go_annotator() arguments (numbers or TRUE/FALSE), with the term
# texts `defs`.
select_configs <- function(configs, which, defs) {
  if (is.null(which)) return(configs)
  parse_config <- function(cn) {
    kv <- strsplit(trimws(strsplit(cn, ",", fixed = TRUE)[[1]]), "=", fixed = TRUE)
    if (!all(lengths(kv) == 2)) stop("unknown configuration: ", cn)
    vals <- lapply(kv, function(p) {
      v <- trimws(p[2])
      if (v %in% c("TRUE", "FALSE")) as.logical(v) else as.numeric(v)
    })
    list(defs = defs, args = stats::setNames(vals, trimws(vapply(kv, `[`, "", 1))))
  }
  lapply(stats::setNames(which, which), function(cn) {
    if (cn %in% names(configs)) configs[[cn]] else parse_config(cn)
  })
}

