#' A small subset of the Gene Ontology
#'
#' About 300 biological-process terms of the Gene Ontology with their names,
#' definitions and parent links (all ancestors of the chosen terms are
#' included, so the subset is closed under the true-path rule). Used in the
#' examples, the tests and the vignette of [go_annotator()].
#'
#' @format A list with two data frames:
#' \describe{
#'   \item{terms}{`go_id`, `name`, `definition`, `ontology`.}
#'   \item{hierarchy}{`child`, `parent`, `relationship` (GO ids; is_a, part_of
#'     and regulates links).}
#' }
#' @source The Gene Ontology (<http://geneontology.org>), release shipped with
#'   the Bioconductor package GO.db 3.16.0 (GO.sqlite). The Gene Ontology is
#'   licensed under the Creative Commons Attribution 4.0 International licence
#'   (CC BY 4.0); see `inst/COPYRIGHTS`. Ashburner et al. (2000) Gene Ontology:
#'   tool for the unification of biology. Nat Genet 25:25-29; The Gene
#'   Ontology Consortium (2023) Genetics 224:iyad031. The subset was made by
#'   the script `data-raw/go_subset.R` of the package sources.
"go_subset"

#' Read the Gene Ontology from GO.db's SQLite file
#'
#' Reads all terms (with names and definitions) and parent links of the Gene
#' Ontology from the `GO.sqlite` file of the Bioconductor package GO.db,
#' without loading GO.db itself. Needs the packages DBI and RSQLite.
#'
#' @param path Path to `GO.sqlite`. `NULL` looks for it in an installed GO.db
#'   (`extdata/GO.sqlite`).
#' @param ontology Which ontologies to read (`"BP"`, `"MF"`, `"CC"`).
#' @param synonyms If `TRUE`, `terms` gains a column `synonyms`: each term's
#'   text synonyms (exact, broad, narrow and related; not alternative GO ids)
#'   joined by `" | "`, `""` for none. [go_annotator()] counts their words
#'   with weight `synonym_weight`.
#' @return A list with data frames `terms` (`go_id`, `name`, `definition`,
#'   `ontology`, and `synonyms` if asked) and `hierarchy` (`child`, `parent`,
#'   `relationship`), in the format of [go_subset].
#' @examples
#' path <- system.file("extdata", "GO.sqlite", package = "GO.db")
#' if (nzchar(path) && requireNamespace("RSQLite", quietly = TRUE)) {
#'   go <- read_go_sqlite(path, ontology = "CC")
#'   nrow(go$terms)
#' }
#' @export
read_go_sqlite <- function(path = NULL, ontology = c("BP", "MF", "CC"), synonyms = FALSE) {
  ontology <- match.arg(ontology, several.ok = TRUE)
  synonyms <- check_flag(synonyms, "synonyms")
  if (is.null(path)) {
    path <- system.file("extdata", "GO.sqlite", package = "GO.db")
    if (!nzchar(path)) {
      stop("`path` is NULL and GO.db is not installed: install GO.db or give the path to GO.sqlite.",
           call. = FALSE)
    }
  }
  if (!is.character(path) || length(path) != 1 || is.na(path) || !file.exists(path)) {
    stop("`path` must be the path of an existing GO.sqlite file.", call. = FALSE)
  }
  for (p in c("DBI", "RSQLite")) {
    if (!requireNamespace(p, quietly = TRUE)) {
      stop(sprintf("read_go_sqlite() needs the package %s.", p), call. = FALSE)
    }
  }
  con <- DBI::dbConnect(RSQLite::SQLite(), path, flags = RSQLite::SQLITE_RO)
  on.exit(DBI::dbDisconnect(con), add = TRUE)
  if (!"go_term" %in% DBI::dbListTables(con)) {
    stop("`path` is not a GO.db SQLite file (no table go_term).", call. = FALSE)
  }
  terms <- DBI::dbGetQuery(con, "SELECT _id AS id, go_id, term AS name, definition, ontology FROM go_term")
  terms <- terms[terms$ontology %in% ontology, , drop = FALSE]
  links <- lapply(tolower(ontology), function(o) {
    DBI::dbGetQuery(con, sprintf(
      "SELECT _id AS child, _parent_id AS parent, relationship_type AS relationship FROM go_%s_parents",
      o))
  })
  links <- do.call(rbind, links)
  hierarchy <- data.frame(child = terms$go_id[match(links$child, terms$id)],
                          parent = terms$go_id[match(links$parent, terms$id)],
                          relationship = links$relationship, stringsAsFactors = FALSE)
  hierarchy <- hierarchy[!is.na(hierarchy$child) & !is.na(hierarchy$parent), , drop = FALSE]
  terms$definition[is.na(terms$definition)] <- ""
  cols <- c("go_id", "name", "definition", "ontology")
  if (synonyms) {
    # text synonyms only (not the alternative GO ids), joined by " | " per term
    syn <- DBI::dbGetQuery(con, "SELECT _id AS id, synonym FROM go_synonym WHERE like_go_id = 0")
    syn <- syn[syn$id %in% terms$id, , drop = FALSE]
    joined <- tapply(syn$synonym, syn$id, paste, collapse = " | ")
    terms$synonyms <- unname(as.character(joined[as.character(terms$id)]))
    terms$synonyms[is.na(terms$synonyms)] <- ""
    cols <- c(cols, "synonyms")
  }
  terms <- terms[order(terms$go_id), cols]
  rownames(terms) <- NULL
  rownames(hierarchy) <- NULL
  list(terms = terms, hierarchy = hierarchy)
}

#' Simulate a corpus from the GO annotation model
#'
#' Draws a corpus from the model fitted by [go_annotator()], so that recovery
#' can be measured. Each author gets a planted profile: `terms_per_author`
#' terms drawn at random (among terms with a non-empty definition) with
#' Dirichlet(`concentration`) weights. Each document gets between 1 and
#' `max_authors` authors and `sentences_per_document` sentences; each sentence
#' picks an author uniformly, a term from the author's profile, and
#' `1 + Poisson(words_per_sentence - 1)` words, each drawn from the term's
#' definition tokens with probability `1 - noise` and otherwise uniformly from
#' the vocabulary of all definitions (a word that may belong to other terms).
#' Uses R's random number generator.
#'
#' @param definitions Data frame of GO terms (`go_id`, `definition`), e.g.
#'   `go_subset$terms`.
#' @param n_authors,n_documents Number of authors and documents.
#' @param sentences_per_document Sentences per document.
#' @param max_authors Maximum number of authors per document.
#' @param terms_per_author Number of terms in each planted profile.
#' @param words_per_sentence Mean number of words per sentence.
#' @param noise Probability that a word is background noise.
#' @param concentration Dirichlet concentration of the profile weights.
#' @param tokenizer Tokenizer applied to the definitions.
#' @param seed Optional seed for [set.seed()] (R's integer range); `NULL`: the
#'   current state of R's random number generator rules.
#' @return A list with `sentences` (data frame `document`, `text`, `go_id`:
#'   the planted term), `authors` (data frame `document`, `author`) and
#'   `profiles` (data frame `author`, `go_id`, `weight`: the planted theta).
#' @examples
#' sim <- simulate_go_corpus(go_subset$terms, n_authors = 3, n_documents = 5,
#'                           seed = 1)
#' head(sim$sentences)
#' @export
simulate_go_corpus <- function(definitions, n_authors = 20, n_documents = 100,
                               sentences_per_document = 10, max_authors = 3,
                               terms_per_author = 5, words_per_sentence = 8, noise = 0.2,
                               concentration = 1, tokenizer = go_tokenize, seed = NULL) {
  go_check_df(definitions, "definitions", c("go_id", "definition"))
  n_authors <- check_count(n_authors, "n_authors")
  n_documents <- check_count(n_documents, "n_documents")
  sentences_per_document <- check_count(sentences_per_document, "sentences_per_document")
  max_authors <- check_count(max_authors, "max_authors")
  terms_per_author <- check_count(terms_per_author, "terms_per_author")
  if (n_authors < 1 || n_documents < 1 || max_authors < 1 || terms_per_author < 1) {
    stop("`n_authors`, `n_documents`, `max_authors` and `terms_per_author` must be >= 1.",
         call. = FALSE)
  }
  words_per_sentence <- go_check_scalar(words_per_sentence, "words_per_sentence", lower = 1)
  noise <- go_check_scalar(noise, "noise", lower = 0)
  if (noise > 1) stop("`noise` must be in [0, 1].", call. = FALSE)
  concentration <- go_check_scalar(concentration, "concentration", lower = 0, open = TRUE)
  seed <- go_check_seed(seed)
  if (!is.null(seed)) {
    withr::local_preserve_seed()
    set.seed(seed)
  }
  tok <- go_tokens(tokenizer, go_check_text(definitions$definition, "definitions$definition"),
                   "definitions")
  usable <- which(lengths(tok) > 0)
  if (length(usable) < terms_per_author) {
    stop("`definitions` has fewer non-empty definitions than `terms_per_author`.", call. = FALSE)
  }
  vocab <- unique(unlist(tok, use.names = FALSE))
  ids <- as.character(definitions$go_id)
  authors_id <- sprintf("A%04d", seq_len(n_authors))
  prof_terms <- lapply(seq_len(n_authors), function(a) {
    usable[sample.int(length(usable), terms_per_author)]
  })
  prof_w <- lapply(seq_len(n_authors), function(a) {
    g <- stats::rgamma(terms_per_author, concentration)
    g / sum(g)
  })
  docs <- sprintf("D%05d", seq_len(n_documents))
  n_auth <- sample.int(min(max_authors, n_authors), n_documents, replace = TRUE)
  doc_auth <- lapply(n_auth, function(k) sort(sample.int(n_authors, k)))
  authors <- data.frame(document = rep(docs, n_auth),
                        author = authors_id[unlist(doc_auth)], stringsAsFactors = FALSE)
  S <- n_documents * sentences_per_document
  sdoc <- rep(seq_len(n_documents), each = sentences_per_document)
  sauth <- vapply(sdoc, function(d) {
    a <- doc_auth[[d]]
    a[sample.int(length(a), 1)]
  }, integer(1))
  sterm <- vapply(sauth, function(a) {
    prof_terms[[a]][sample.int(terms_per_author, 1, prob = prof_w[[a]])]
  }, integer(1))
  len <- 1 + stats::rpois(S, words_per_sentence - 1)
  total <- sum(len)
  owner <- rep.int(seq_len(S), len)
  is_noise <- stats::runif(total) < noise
  term_of_word <- sterm[owner]
  deflen <- lengths(tok)[term_of_word]
  pick <- ceiling(stats::runif(total) * deflen)
  start <- c(0, cumsum(lengths(tok)))[term_of_word]
  flat <- unlist(tok, use.names = FALSE)
  words <- flat[start + pick]
  words[is_noise] <- vocab[sample.int(length(vocab), sum(is_noise), replace = TRUE)]
  text <- vapply(split(words, factor(owner, levels = seq_len(S))), paste, character(1),
                 collapse = " ")
  sentences <- data.frame(document = docs[sdoc], text = unname(text), go_id = ids[sterm],
                          stringsAsFactors = FALSE)
  profiles <- data.frame(author = rep(authors_id, each = terms_per_author),
                         go_id = ids[unlist(prof_terms)], weight = unlist(prof_w),
                         stringsAsFactors = FALSE)
  list(sentences = sentences, authors = authors, profiles = profiles)
}
