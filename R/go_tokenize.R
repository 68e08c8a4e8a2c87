#' Tokenize text for the GO annotation model
#'
#' The built-in tokenizer used by [go_annotator()]: text is converted to
#' UTF-8, lower-cased, split on every character that is not a letter or a
#' digit (any script), and tokens shorter than `min_length` characters or
#' found in `stopwords` are dropped. With `stem = TRUE` the remaining tokens
#' are reduced to their stems by the Snowball (Porter 2) English stemmer of
#' the package SnowballC, so that "regulates", "regulated" and "regulation"
#' become the same word "regul".
#'
#' With `normalize = TRUE` the text is first rewritten by [go_normalize_text()]
#' (Greek letters spelled out, hyphenated compounds also written as one word,
#' Roman numerals ii-x as digits) and tokens made of digits are kept whatever
#' their length, so that "IL-1" and "interleukin-1" keep their number.
#'
#' A user-supplied tokenizer passed to [go_annotator()] must behave like this
#' function: take a character vector and return a list of character vectors of
#' the same length (one vector of tokens per input string).
#'
#' @section Encodings:
#' Strings declared as latin1 are converted to UTF-8. Strings that are not
#' valid in their declared encoding (for example latin1 text read into a
#' UTF-8 session without declaring its encoding), and
#' strings declared as `"bytes"`, are an error naming the first offending
#' element: convert them first, e.g. with
#' `iconv(x, from = "latin1", to = "UTF-8")`. Lower-casing of letters outside
#' ASCII follows the session's locale. `NA` gives no tokens.
#'
#' @param text Character vector (one element per sentence or definition).
#' @param stopwords Character vector of tokens to drop (default
#'   [go_stopwords()]); they are matched before stemming.
#' @param min_length Minimum number of characters of a kept token (before
#'   stemming).
#' @param stem If `TRUE`, stem the tokens (needs the package SnowballC).
#' @param normalize If `TRUE`, normalise the text first with
#'   [go_normalize_text()] and keep digit tokens shorter than `min_length`.
#' @return A list of character vectors, one per element of `text`.
#' @examples
#' go_tokenize("The regulation of DNA repair, in response to UV-light.")
#' if (requireNamespace("SnowballC", quietly = TRUE)) {
#'   go_tokenize("Astrocytes differentiate; astrocyte differentiation.", stem = TRUE)
#' }
#' @export
go_tokenize <- function(text, stopwords = go_stopwords(), min_length = 2L, stem = FALSE,
                        normalize = FALSE) {
  if (is.factor(text)) text <- as.character(text)
  if (!is.character(text)) {
    stop(sprintf("`text` must be a character vector, not %s.", class(text)[1]), call. = FALSE)
  }
  if (!is.character(stopwords)) {
    stop("`stopwords` must be a character vector.", call. = FALSE)
  }
  min_length <- check_count(min_length, "min_length")
  stem <- check_flag(stem, "stem")
  normalize <- check_flag(normalize, "normalize")
  if (stem) go_need_snowball()
  text <- go_as_utf8(text, "text")
  text[is.na(text)] <- ""
  if (normalize) text <- go_normalize_text(text)
  pieces <- strsplit(tolower(text), "[^\\p{L}\\p{N}]+", perl = TRUE)
  n <- lengths(pieces)
  tok <- as.character(unlist(pieces, use.names = FALSE))
  id <- rep.int(seq_along(text), n)
  long <- nchar(tok) >= max(1, min_length)
  if (normalize) long <- long | grepl("^[0-9]+$", tok)
  keep <- long & !(tok %in% tolower(stopwords))
  tok <- tok[keep]
  if (stem) tok <- go_stem(tok)
  out <- split(tok, factor(id[keep], levels = seq_along(text)))
  names(out) <- NULL
  out
}

#' Normalise biological text before tokenization
#'
#' Rewrites text so that common spelling variants of GO text give the same
#' tokens: Greek letters written as symbols are spelled out ("TNF-" followed by the alpha symbol becomes
#' "TNF-alpha", as GO writes them); dash characters (hyphen, non-breaking
#' hyphen, en dash, minus sign) become "-"; every hyphenated compound of
#' letters and digits is kept and followed by its parts written together
#' ("up-regulation" becomes "up-regulation upregulation", "IL-1" becomes
#' "IL-1 IL1"), so that it matches both the split and the closed spelling;
#' the stand-alone Roman numerals ii to x become digits ("type II" becomes
#' "type 2"). Used by [go_tokenize()] with `normalize = TRUE` and by
#' [go_annotator()] with `normalize = TRUE`.
#'
#' @param text Character vector (UTF-8).
#' @return The normalised character vector.
#' @examples
#' go_normalize_text(c("TNF-\u03b1 up-regulation", "type II interferon"))
#' @export
go_normalize_text <- function(text) {
  if (is.factor(text)) text <- as.character(text)
  if (!is.character(text)) {
    stop(sprintf("`text` must be a character vector, not %s.", class(text)[1]), call. = FALSE)
  }
  text <- go_as_utf8(text, "text")
  na <- is.na(text)
  text[na] <- ""
  gr <- go_greek()
  for (i in seq_along(gr)) text <- gsub(names(gr)[i], gr[[i]], text, fixed = TRUE)
  text <- gsub("[\u2010\u2011\u2012\u2013\u2212]", "-", text, perl = TRUE)
  # hyphenated compounds: keep them, and add the closed form
  m <- gregexpr("[\\p{L}\\p{N}]+(?:-[\\p{L}\\p{N}]+)+", text, perl = TRUE)
  regmatches(text, m) <- lapply(regmatches(text, m), function(x) {
    paste(x, gsub("-", "", x, fixed = TRUE))
  })
  roman <- c(ii = "2", iii = "3", iv = "4", v = "5", vi = "6", vii = "7", viii = "8", ix = "9",
             x = "10")
  for (r in names(roman)) {
    text <- gsub(sprintf("(?<![\\p{L}\\p{N}])(?i:%s)(?![\\p{L}\\p{N}])", r), roman[[r]],
                 text, perl = TRUE)
  }
  text[na] <- NA_character_
  Encoding(text) <- "UTF-8"
  text
}

# Greek letters (lower and upper case symbols) and their spelled-out names.
go_greek <- function() {
  nm <- c("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
          "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau",
          "upsilon", "phi", "chi", "psi", "omega")
  lower <- intToUtf8(c(0x3b1:0x3c1, 0x3c3:0x3c9), multiple = TRUE)
  upper <- intToUtf8(c(0x391:0x3a1, 0x3a3:0x3a9), multiple = TRUE)
  stats::setNames(c(nm, nm, "sigma", "mu"), c(lower, upper, "\u03c2", "\u00b5"))
}

# Stops with an instruction to install SnowballC when it is missing.
go_need_snowball <- function() {
  if (!go_has_snowball()) {
    stop("`stem = TRUE` needs the package SnowballC: install it with install.packages(\"SnowballC\").",
         call. = FALSE)
  }
  invisible(TRUE)
}

go_has_snowball <- function() requireNamespace("SnowballC", quietly = TRUE)

# English Snowball stems of UTF-8 tokens, computed once per distinct token.
go_stem <- function(tok) {
  if (length(tok) == 0) return(character())
  u <- unique(tok)
  s <- SnowballC::wordStem(u, language = "english")
  Encoding(s) <- "UTF-8"  # the stemmer reads and writes UTF-8 bytes
  s[match(tok, u)]
}

# Converts a character vector to UTF-8. Declared latin1 strings are converted;
# a string that is not valid in its declared encoding (or is declared
# "bytes") is an error naming `arg` and the first bad element, never silently
# turned into other characters.
go_as_utf8 <- function(x, arg) {
  enc <- Encoding(x)
  bad <- which(enc == "bytes")
  if (length(bad) == 0) {
    x <- enc2utf8(x)
    bad <- which(!is.na(x) & !validUTF8(x))
  }
  if (length(bad) > 0) {
    shown <- go_escape_bytes(x[bad[1]], 40)
    stop(sprintf(paste0("`%s` is not valid UTF-8 text (element %d: \"%s\"; %d element(s) in all). ",
                        "Convert it first, e.g. with iconv(x, from = \"latin1\", to = \"UTF-8\"), ",
                        "or declare its encoding with Encoding(x) <- \"latin1\"."),
                 arg, bad[1], shown, length(bad)), call. = FALSE)
  }
  x
}

# The first `n` bytes of a string, printable ASCII kept and every other byte
# written as <xx>, for error messages about text of unknown encoding.
go_escape_bytes <- function(s, n) {
  b <- utils::head(charToRaw(s), n)
  v <- as.integer(b)
  out <- ifelse(v >= 32 & v < 127, vapply(v, function(i) rawToChar(as.raw(i)), ""),
                sprintf("<%02x>", v))
  paste(out, collapse = "")
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
