# Builds data/go_subset.rda: about 300 biological-process GO terms, closed under
# ancestors, from the GO.sqlite file of the Bioconductor package GO.db
# (installed from the Debian package r-bioc-go.db, GO.db 3.16.0).
# Run from the package root with the development version of augmentedGP loaded
# (for read_go_sqlite()): Rscript data-raw/go_subset.R
# The Gene Ontology is CC BY 4.0 (see inst/COPYRIGHTS).
# Either load the development package, or source the needed R files:
for (f in c("R/validate.R", "R/go_tokenize.R", "R/go_annotator.R", "R/go_data.R")) source(f)

go <- read_go_sqlite(ontology = "BP")
terms <- go$terms
hier <- go$hierarchy
parents <- split(hier$parent, hier$child)
ancestors <- function(ids) {
  out <- ids
  repeat {
    nxt <- unique(c(out, unlist(parents[out], use.names = FALSE)))
    if (length(nxt) == length(out)) return(out)
    out <- nxt
  }
}
ntok <- lengths(go_tokenize(terms$definition))
set.seed(20260101)
# candidate seeds: specific terms with informative definitions, no "regulation" terms
cand <- terms$go_id[ntok >= 12 & !grepl("regulation", terms$name)]
cand <- sample(cand)
keep <- character()
for (id in cand) {
  nxt <- ancestors(unique(c(keep, id)))
  if (length(nxt) > 300) next
  keep <- nxt
  if (length(keep) >= 280) break
}
sub_terms <- terms[terms$go_id %in% keep, ]
sub_hier <- hier[hier$child %in% keep & hier$parent %in% keep, ]
rownames(sub_terms) <- NULL
rownames(sub_hier) <- NULL
go_subset <- list(terms = sub_terms, hierarchy = sub_hier)
stopifnot(all(unlist(lapply(go_subset$terms, function(x) !is.character(x) ||
  all(!grepl("[^ -~]", x))))))
save(go_subset, file = "data/go_subset.rda", compress = "xz")
cat(nrow(sub_terms), "terms,", nrow(sub_hier), "links\n")
