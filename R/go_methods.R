#' Predict GO terms for sentences
#'
#' Without `sentences`, returns the most probable GO terms of the training
#' sentences: the responsibilities of the fit's final E-step
#' (`fitted(object)`). With `sentences`, runs the E-step of the fitted
#' [go_annotator()] on them (new documents, or the training documents again)
#' and returns the most probable GO terms of every sentence. `P(G | d)` is
#' the mean of the profiles of the document's authors; authors not seen in
#' training (and documents without any listed author) use the corpus-wide
#' term distribution `fit$pi`, the mean responsibility of the training
#' sentences smoothed towards the uniform distribution by the fit's
#' `corpus_pseudocount` (so that terms frequent in a small training corpus,
#' such as the root, do not win for new sentences by their prior alone). Words outside the fitted vocabulary are
#' ignored. The text is tokenized as in training (with the same tokenizer
#' and stemming). Probabilities below `1e-10` (or below the fit's
#' `truncate`, when larger) are dropped, so a sentence may get fewer than
#' `top` rows.
#'
#' @param object A `go_annotator` fit.
#' @param sentences New sentences, as in [go_annotator()]; `NULL` (default):
#'   the training sentences.
#' @param authors Data frame of (`document`, `author`) pairs for the new
#'   documents, or `NULL` (every document uses `fit$pi`). Only with
#'   `sentences`.
#' @param top Number of terms reported per sentence.
#' @param documents With a matrix `sentences`: the document id of each row.
#' @param propagate If `TRUE` (default when the fit has a hierarchy), report
#'   for every term the probability of it or any of its descendants (true-path
#'   rule), so ancestors score at least as high as their descendants.
#' @param threads Number of threads.
#' @param ... Unused.
#' @return A data frame with columns `sentence` (row of `sentences`, or of the
#'   training sentences), `document`, `rank`, `go_id`, `name` and
#'   `probability`, sorted by sentence and rank. No rows when `sentences` has
#'   none.
#' @examples
#' sim <- simulate_go_corpus(go_subset$terms, n_authors = 5, n_documents = 20,
#'                           seed = 1)
#' fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms,
#'                     hierarchy = go_subset$hierarchy, max_iter = 20, threads = 1)
#' head(predict(fit, top = 1, propagate = FALSE))   # training sentences
#' new <- data.frame(document = "new", text = "DNA repair after damage")
#' predict(fit, new, authors = NULL, top = 3, threads = 1)
#' @export
predict.go_annotator <- function(object, sentences = NULL, authors = NULL, top = 5,
                                 documents = NULL, propagate = !is.null(object$ancestors),
                                 threads = NULL, ...) {
  fit <- object
  top <- check_count(top, "top")
  if (top < 1) stop("`top` must be at least 1.", call. = FALSE)
  propagate <- check_flag(propagate, "propagate")
  if (propagate && is.null(fit$ancestors)) {
    stop("`propagate = TRUE` needs a fit with a `hierarchy`.", call. = FALSE)
  }
  threads <- resolve_threads(threads)
  if (is.null(sentences)) {
    if (!is.null(authors) || !is.null(documents)) {
      stop("`authors` and `documents` are only used together with `sentences`.", call. = FALSE)
    }
    R <- fit$responsibilities
    R <- R * (R >= 1e-10)
    return(go_rank_table(fit, R, fit$documents, top, propagate))
  }
  corp <- go_prepare_sentences(sentences, documents, fit$tokenizer)
  S <- length(corp$doc)
  K <- length(fit$go_id)
  if (S == 0) {
    return(go_rank_table(fit, Matrix::sparseMatrix(i = integer(), j = integer(), x = double(),
                                                   dims = c(0, K)), character(), top, propagate))
  }
  if (is.null(authors)) authors <- data.frame(document = character(), author = character())
  auth <- go_prepare_authors(authors, corp$doc, required = FALSE)
  A <- length(fit$theta_floor)
  data <- go_build_data(corp, list(go_id = fit$go_id), fit$vocabulary, auth$doc_levels,
                        auth$pairs, names(fit$theta_floor), unknown_profile = A + 1L)
  data$n_terms <- K
  data$definitions <- list(p = integer(length(fit$vocabulary) + 1), i = integer(), x = double())
  # the unknown author's profile: pi as a floor plus increments on the terms with a share
  S0 <- fit$n[["sentences"]]
  cp <- fit$corpus_pseudocount
  nz <- which(fit$share > 0)
  th <- fit$theta_rows
  profiles <- list(p = c(th$p, th$p[length(th$p)] + length(nz)), g = c(th$g, nz - 1L),
                   v = c(th$v, S0 * fit$share[nz] / (S0 + K * cp)),
                   floor = c(th$floor, fit$pi_floor))
  control <- list(pseudocount = fit$pseudocount, author_pseudocount = 0, hard = FALSE,
                  max_iter = 1L, tol = 0, truncate = max(1e-10, fit$truncate),
                  threads = threads, seed = fit$seed, skip_min = go_skip_min())
  res <- .go_estep_cpp(data, profiles, fit$phi, control)
  R <- go_rows_to_matrix(res$p, res$g, res$r, S, K)[order(data$order), , drop = FALSE]
  go_rank_table(fit, R, corp$doc, top, propagate)
}

# The `top` largest entries of every row of the sentence x term probability
# matrix R (after propagation to ancestors if asked), as the data frame
# returned by predict(): ties in probability are listed in term order.
go_rank_table <- function(fit, R, docs, top, propagate) {
  if (propagate) R <- R %*% fit$ancestors
  tr <- Matrix::summary(R)
  tr <- tr[tr$x != 0, , drop = FALSE]
  tr <- tr[order(tr$i, -tr$x, tr$j), , drop = FALSE]
  rank <- stats::ave(tr$i, tr$i, FUN = seq_along)
  tr <- tr[rank <= top, , drop = FALSE]
  rank <- rank[rank <= top]
  out <- data.frame(sentence = as.integer(tr$i), document = as.character(docs[tr$i]),
                    rank = as.integer(rank), go_id = fit$go_id[tr$j], name = fit$name[tr$j],
                    probability = as.double(tr$x), stringsAsFactors = FALSE)
  rownames(out) <- NULL
  out
}

#' Fitted author profiles and term word counts of a GO annotator
#'
#' `coef()` returns the fitted parameters of a [go_annotator()] fit.
#' `type = "profiles"` (default) gives the author profiles `theta`: a sparse
#' author x GO term matrix (`Matrix::dgCMatrix`, authors as row names, GO
#' ids as column names) whose row `a` is `P(term | author a)` and sums to
#' one. With `author_pseudocount > 0` every entry is positive, so this matrix
#' holds authors x terms values (it is built on request; the fit stores the
#' compact form). `compact = TRUE` gives that compact form instead: a list
#' with `floor` (named numeric, one value per author) and `increment` (sparse
#' author x term matrix, non-negative) such that
#' `theta[a, G] = floor[a] + increment[a, G]`; with a Dirichlet prior count
#' `c = author_pseudocount` on the profiles, `floor[a] = c / (c K + N_a)` and
#' `increment[a, G] = n_aG / (c K + N_a)` for the author's expected number of
#' sentences `n_aG` about term `G` (`N_a` in total, `K` terms).
#' `type = "words"` gives the sparse GO term x word matrix `C` of the
#' definition counts plus the expected corpus counts, from which the term's
#' word distribution is
#' `phi_G(w) = (C_Gw + pseudocount) / (sum_w C_Gw + V pseudocount)`
#' with `V = ncol(C)` the vocabulary size (words are stems when the fit used
#' `stem = TRUE`).
#'
#' @param object A `go_annotator` fit.
#' @param type `"profiles"` or `"words"`.
#' @param compact With `type = "profiles"`: `FALSE` (default) for the full
#'   matrix, `TRUE` for the floor plus sparse increments.
#' @param ... Unused.
#' @return A sparse matrix (`Matrix::dgCMatrix`) or, with `compact = TRUE`, a
#'   list, see Description.
#' @seealso [fitted.go_annotator()], [top_terms()].
#' @examples
#' sim <- simulate_go_corpus(go_subset$terms, n_authors = 3, n_documents = 10,
#'                           seed = 2)
#' fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms,
#'                     max_iter = 10, threads = 1)
#' th <- coef(fit)
#' dim(th)
#' Matrix::rowSums(th)
#' cm <- coef(fit, compact = TRUE)
#' cm$floor
#' Matrix::nnzero(cm$increment)
#' C <- coef(fit, type = "words")
#' # the five most probable words of the first planted term of author A0001
#' g <- sim$profiles$go_id[1]
#' head(sort(C[g, ], decreasing = TRUE), 5)
#' @export
coef.go_annotator <- function(object, type = c("profiles", "words"), compact = FALSE, ...) {
  type <- match.arg(type)
  if (type == "profiles") {
    compact <- check_flag(compact, "compact")
    if (compact) return(list(floor = object$theta_floor, increment = object$theta_increment))
    return(go_profile_matrix(object$theta_floor, object$theta_increment))
  }
  ph <- object$phi
  V <- length(object$vocabulary)
  m <- Matrix::sparseMatrix(i = ph$g + 1L, j = rep.int(seq_len(V), diff(ph$wp)), x = ph$count,
                            dims = c(length(object$go_id), V))
  dimnames(m) <- list(object$go_id, object$vocabulary)
  m
}

# The full profile matrix floor + increment (a dgCMatrix; every entry of a row
# with a positive floor is stored).
go_profile_matrix <- function(floor, increment) {
  pos <- which(floor > 0)
  if (length(pos) == 0) return(increment)
  K <- ncol(increment)
  fm <- Matrix::sparseMatrix(i = rep.int(pos, K), j = rep(seq_len(K), each = length(pos)),
                             x = rep.int(floor[pos], K), dims = dim(increment),
                             dimnames = dimnames(increment))
  fm + increment
}

#' Fitted term probabilities of the training sentences
#'
#' @param object A `go_annotator` fit.
#' @param type `"probabilities"` (default): the sparse sentence x GO term
#'   matrix of posterior term probabilities (responsibilities) of the
#'   training sentences from the final E-step, rows in the order of the
#'   training sentences, GO ids as column names (rows sum to one; with
#'   `truncate > 0` probabilities below it are zero). `"term"`: the most
#'   probable GO id of every sentence (`object$assignment`).
#' @param ... Unused.
#' @return A `Matrix::dgCMatrix` or a character vector.
#' @seealso [predict.go_annotator()] for the top terms as a data frame,
#'   [coef.go_annotator()].
#' @examples
#' sim <- simulate_go_corpus(go_subset$terms, n_authors = 3, n_documents = 10,
#'                           seed = 2)
#' fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms,
#'                     max_iter = 10, threads = 1)
#' dim(fitted(fit))
#' mean(fitted(fit, type = "term") == sim$sentences$go_id)
#' @export
fitted.go_annotator <- function(object, type = c("probabilities", "term"), ...) {
  type <- match.arg(type)
  if (type == "term") object$assignment else object$responsibilities
}

#' Top GO terms of an author
#'
#' @param fit A `go_annotator` fit.
#' @param author An author id used in fitting.
#' @param n Number of terms.
#' @return A data frame with columns `author`, `go_id`, `name` and
#'   `probability` (the author's profile `theta_a`), largest first.
#' @examples
#' sim <- simulate_go_corpus(go_subset$terms, n_authors = 3, n_documents = 10,
#'                           seed = 2)
#' fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms,
#'                     max_iter = 10, threads = 1)
#' top_terms(fit, sim$authors$author[1], n = 3)
#' @export
top_terms <- function(fit, author, n = 10) {
  if (!inherits(fit, "go_annotator")) {
    stop("`fit` must be a go_annotator fit.", call. = FALSE)
  }
  if (length(author) != 1 || is.na(author)) {
    stop("`author` must be a single author id.", call. = FALSE)
  }
  a <- match(as.character(author), names(fit$theta_floor))
  if (is.na(a)) stop(sprintf("`author` '%s' is not in the fit.", author), call. = FALSE)
  n <- check_count(n, "n")
  row <- fit$theta_floor[[a]] + as.numeric(fit$theta_increment[a, ])
  o <- utils::head(order(-row, seq_along(row)), n)
  data.frame(author = as.character(author), go_id = fit$go_id[o], name = fit$name[o],
             probability = row[o], stringsAsFactors = FALSE, row.names = NULL)
}

#' @export
print.go_annotator <- function(x, ...) {
  cat(sprintf("<go_annotator> %s EM, %d iteration(s), %s\n", x$em, x$iterations,
              if (x$converged) "converged" else "not converged"))
  cat(sprintf("  %d sentences, %d documents, %d authors, %d GO terms, %d words\n",
              x$n[["sentences"]], x$n[["documents"]], x$n[["authors"]], x$n[["terms"]],
              x$n[["words"]]))
  cat(sprintf("  objective: %.6g -> %.6g\n", x$objective[1], x$objective[length(x$objective)]))
  if (isTRUE(x$stem)) cat("  words are Snowball stems\n")
  if (isTRUE(x$hierarchy_weight > 0)) {
    cat(sprintf("  term words smoothed over the hierarchy (hierarchy_weight %s)\n",
                format(x$hierarchy_weight)))
  }
  invisible(x)
}

#' Summarise a GO annotator fit
#'
#' @param object A `go_annotator` fit.
#' @param n Number of corpus-wide top terms to list.
#' @param ... Unused.
#' @return An object of class `summary.go_annotator` (a list) with the sizes,
#'   the objective trace, the convergence status, the share of sentences whose
#'   term changed from the definitions-only baseline and the corpus-wide top
#'   terms.
#' @examples
#' sim <- simulate_go_corpus(go_subset$terms, n_authors = 3, n_documents = 10,
#'                           seed = 2)
#' fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms,
#'                     max_iter = 10, threads = 1)
#' summary(fit)
#' @export
summary.go_annotator <- function(object, n = 5, ...) {
  share <- if (is.null(object$share)) object$pi else object$share
  o <- utils::head(order(-share), n)
  structure(list(
    em = object$em, n = object$n, iterations = object$iterations, stem = isTRUE(object$stem),
    converged = object$converged, objective = object$objective,
    changed_from_baseline = mean(object$assignment != object$baseline),
    mean_assignment_prob = mean(object$assignment_prob),
    top = data.frame(go_id = object$go_id[o], name = object$name[o],
                     share = unname(share[o]), stringsAsFactors = FALSE)
  ), class = "summary.go_annotator")
}

#' @export
print.summary.go_annotator <- function(x, ...) {
  cat(sprintf("GO annotator (%s EM): %d iteration(s), %s\n", x$em, x$iterations,
              if (x$converged) "converged" else "not converged"))
  cat(sprintf("Sizes: %s%s\n", paste(names(x$n), x$n, sep = " = ", collapse = ", "),
              if (isTRUE(x$stem)) " (words are Snowball stems)" else ""))
  cat(sprintf("Objective: first %.6g, last %.6g\n", x$objective[1],
              x$objective[length(x$objective)]))
  cat(sprintf("Sentences whose best term differs from the definitions-only baseline: %.1f%%\n",
              100 * x$changed_from_baseline))
  cat(sprintf("Mean probability of the best term: %.3f\n", x$mean_assignment_prob))
  cat("Most frequent terms in the corpus:\n")
  print(x$top, row.names = FALSE)
  invisible(x)
}

#' Plot a GO annotator fit
#'
#' `type = "objective"` shows the objective (log marginal likelihood plus log
#' prior) per EM iteration; `type = "author"` shows the top terms of one
#' author's profile, each labelled by its GO id and (shortened) name.
#'
#' @param x,object A `go_annotator` fit.
#' @param type `"objective"` or `"author"`.
#' @param author Author id for `type = "author"` (default: the first author).
#' @param n Number of terms for `type = "author"`.
#' @param ... Passed to [graphics::plot()] / [graphics::barplot()].
#' @return `plot()` returns `x` invisibly; `autoplot()` a ggplot object.
#' @examples
#' sim <- simulate_go_corpus(go_subset$terms, n_authors = 3, n_documents = 10,
#'                           seed = 2)
#' fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms,
#'                     max_iter = 10, threads = 1)
#' plot(fit)
#' plot(fit, type = "author")
#' autoplot(fit, type = "author")
#' @export
plot.go_annotator <- function(x, type = c("objective", "author"), author = NULL, n = 10, ...) {
  type <- match.arg(type)
  if (type == "objective") {
    graphics::plot(seq_along(x$objective), x$objective, type = "b", xlab = "iteration",
                   ylab = "log marginal likelihood + log prior",
                   main = sprintf("%s EM objective", x$em), ...)
  } else {
    tt <- go_author_terms(x, author, n)
    lab <- rev(as.character(tt$label))
    # Left margin wide enough for the longest label (inches), the labels shrunk when
    # they would take more than 55% of the device's width.
    old <- graphics::par("mai")
    on.exit(graphics::par(mai = old), add = TRUE)
    cex <- graphics::par("cex.axis")
    width <- max(graphics::strwidth(lab, units = "inches", cex = cex))
    room <- 0.55 * graphics::par("din")[1]
    if (width > room) {
      cex <- cex * room / width
      width <- room
    }
    graphics::par(mai = c(old[1], width + 0.2, old[3], max(old[4], 0.3)))
    graphics::barplot(rev(tt$probability), names.arg = lab, horiz = TRUE, las = 1,
                      cex.names = cex, col = "#0072B2", border = NA,
                      xlab = "P(term | author)", ...)
    # The title starts at the left edge of the figure, over the labels, so a long
    # author id is not cut off at the right.
    graphics::mtext(sprintf("Top terms of author %s", attr(tt, "author")), side = 3,
                    line = 1.5, adj = 0, at = graphics::grconvertX(0.02, "nfc", "user"),
                    font = 2, cex = 1.1)
  }
  invisible(x)
}

#' @rdname plot.go_annotator
#' @importFrom ggplot2 autoplot
#' @export
autoplot.go_annotator <- function(object, type = c("objective", "author"), author = NULL,
                                  n = 10, ...) {
  type <- match.arg(type)
  if (type == "objective") {
    df <- data.frame(iteration = seq_along(object$objective), objective = object$objective)
    ggplot2::ggplot(df, ggplot2::aes(x = .data$iteration, y = .data$objective)) +
      ggplot2::geom_line(colour = AUGP_LINE) + ggplot2::geom_point(colour = AUGP_LINE) +
      ggplot2::labs(x = "Iteration", y = "log marginal likelihood + log prior",
                    title = sprintf("%s EM objective", object$em)) +
      theme_augp()
  } else {
    tt <- go_author_terms(object, author, n)
    ggplot2::ggplot(tt, ggplot2::aes(x = .data$probability, y = .data$label)) +
      ggplot2::geom_col(fill = "#0072B2", width = 0.75) +
      ggplot2::scale_x_continuous(expand = ggplot2::expansion(mult = c(0, 0.05))) +
      ggplot2::labs(x = "P(term | author)", y = NULL,
                    title = sprintf("Top terms of author %s", attr(tt, "author"))) +
      theme_augp() +
      ggplot2::theme(panel.grid.major.y = ggplot2::element_blank(),
                     plot.title.position = "plot")
  }
}

# The top n terms of an author (default: the first) with plot labels "GO id  name"
# (names shortened to 40 characters), largest first; the labels a factor ordered
# for a horizontal bar chart (largest on top).
go_author_terms <- function(fit, author, n) {
  if (is.null(author)) author <- names(fit$theta_floor)[1]
  tt <- top_terms(fit, author, n)
  nm <- ifelse(nchar(tt$name) > 40, paste0(substr(tt$name, 1, 39), "..."), tt$name)
  lab <- make.unique(paste(tt$go_id, nm))
  tt$label <- factor(lab, levels = rev(lab))
  attr(tt, "author") <- author
  tt
}

#' @importFrom ggplot2 .data
#' @importFrom Matrix sparseMatrix
NULL
