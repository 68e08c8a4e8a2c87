#' Tokenize text for the GO annotation model
#'
#' The built-in tokenizer used by [go_annotator()]: text is lower-cased, split
#' on every character that is not an ASCII letter or digit, and tokens shorter
#' than `min_length` characters or found in `stopwords` are dropped.
#'
#' A user-supplied tokenizer passed to [go_annotator()] must behave like this
#' function: take a character vector and return a list of character vectors of
#' the same length (one vector of tokens per input string).
#'
#' @param text Character vector (one element per sentence or definition).
#' @param stopwords Character vector of tokens to drop (default
#'   [go_stopwords()]).
#' @param min_length Minimum number of characters of a kept token.
#' @return A list of character vectors, one per element of `text`.
#' @examples
#' go_tokenize("The regulation of DNA repair, in response to UV-light.")
#' @export
go_tokenize <- function(text, stopwords = go_stopwords(), min_length = 2L) {
  if (is.factor(text)) text <- as.character(text)
  if (!is.character(text)) {
    stop(sprintf("`text` must be a character vector, not %s.", class(text)[1]), call. = FALSE)
  }
  if (!is.character(stopwords)) {
    stop("`stopwords` must be a character vector.", call. = FALSE)
  }
  min_length <- check_count(min_length, "min_length")
  text[is.na(text)] <- ""
  pieces <- strsplit(tolower(text), "[^a-z0-9]+")
  n <- lengths(pieces)
  tok <- unlist(pieces, use.names = FALSE)
  id <- rep.int(seq_along(text), n)
  keep <- nchar(tok) >= max(1, min_length) & !(tok %in% tolower(stopwords))
  out <- split(tok[keep], factor(id[keep], levels = seq_along(text)))
  names(out) <- NULL
  out
}

#' English stop words used by the GO tokenizer
#'
#' A short list of common English function words that carry no information
#' about a GO term.
#'
#' @return A character vector.
#' @examples
#' head(go_stopwords())
#' @export
go_stopwords <- function() {
  c("a", "about", "above", "after", "again", "against", "all", "also", "am", "an",
    "and", "any", "are", "as", "at", "be", "because", "been", "before", "being",
    "below", "between", "both", "but", "by", "can", "could", "did", "do", "does",
    "doing", "down", "during", "each", "either", "etc", "few", "for", "from",
    "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "however", "i", "if", "in", "into", "is", "it", "its", "itself",
    "may", "me", "might", "more", "most", "must", "my", "no", "nor", "not", "of",
    "off", "on", "once", "one", "only", "or", "other", "our", "ours", "out", "over",
    "own", "same", "she", "should", "so", "some", "such", "than", "that", "the",
    "their", "theirs", "them", "then", "there", "these", "they", "this", "those",
    "through", "thus", "to", "too", "under", "until", "up", "upon", "us", "very",
    "via", "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "whom", "why", "will", "with", "within", "without", "would", "you", "your")
}
