# go_annotator() with the seed model's settings (no background, no author prior,
# definitions as given, no term names, no text normalisation, no stemming, no
# hierarchy smoothing) unless overridden:
# the dense reference implementations and the older tests are written for it.
go_seed_args <- list(background = 0, author_pseudocount = 0, definition_weight = 1,
                     name_weight = 0, normalize = FALSE, stem = FALSE, hierarchy_weight = 0)
ga0 <- function(...) {
  a <- list(...)
  do.call(go_annotator, c(a, go_seed_args[setdiff(names(go_seed_args), names(a))]))
}
