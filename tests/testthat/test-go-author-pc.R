# author_pseudocount = "auto": each author's prior count chosen by held-out word
# likelihood (two folds of sentences), checked against a dense computation
# written from the definition: for a sentence s of fold f of author a,
#   h_as(c) = log sum_G theta_G(c) P(s | G),  theta(c) = (n^- + c) / (N^- + K c),
# n^- the author's credits from the sentences of the other fold.

# The word distributions (K x V) of a fit: phi_G(w) = (C_Gw + pc) / (Z_G + V pc)
# without the background, (1 - lambda) C_Gw / Z_G + lambda beta_w with it.
apc_word_probs <- function(fit, background) {
  C <- as.matrix(coef(fit, type = "words"))
  V <- ncol(C)
  if (background > 0) {
    Z <- rowSums(C)
    phi <- C / ifelse(Z > 0, Z, 1)
    phi[Z == 0, ] <- 1 / V
    lam <- fit$phi$lambda
    (1 - lam) * phi + lam * matrix(fit$phi$beta, nrow(C), V, byrow = TRUE)
  } else {
    (C + fit$pseudocount) / (rowSums(C) + V * fit$pseudocount)
  }
}

# Dense held-out log likelihood of each (author, sentence) pair of `pairs` at the
# prior counts `cs`: a matrix pairs x counts. theta (A x K) and logP (K x V) are the
# parameters of the E-step the choice was made from.
apc_dense_heldout <- function(p, theta, logP, pairs, cs) {
  K <- ncol(theta)
  e <- go_dense_estep(p$X, logP, theta, p$sdoc, p$dauth)
  logL <- p$X %*% t(logP)  # log P(s | G), S x K
  # credits of each sentence to each author: r_sG theta_aG / sum_{b in d} theta_bG
  out <- matrix(NA_real_, nrow(pairs), length(cs))
  ids <- sprintf("a%d", seq_len(p$A))
  for (a in seq_len(p$A)) {
    rows <- which(pairs$author == ids[a])
    sents <- pairs$sentence[rows]
    credit <- matrix(0, length(sents), K)
    for (i in seq_along(sents)) {
      s <- sents[i]
      au <- p$dauth[[p$sdoc[s]]]
      credit[i, ] <- e$R[s, ] * theta[a, ] / colSums(theta[au, , drop = FALSE])
    }
    for (i in seq_along(sents)) {
      other <- pairs$fold[rows] != pairs$fold[rows[i]]
      n <- colSums(credit[other, , drop = FALSE])
      for (j in seq_along(cs)) {
        th <- (n + cs[j]) / (sum(n) + K * cs[j])
        l <- log(th) + logL[sents[i], ]
        out[rows[i], j] <- max(l) + log(sum(exp(l - max(l))))
      }
    }
  }
  out
}

apc_problem <- function(seed) {
  set.seed(seed)
  V <- 30
  K <- 12
  words <- sprintf("w%02d", seq_len(V))
  O <- matrix(0, K, V, dimnames = list(sprintf("GO:%07d", seq_len(K)), words))
  for (g in seq_len(K)) O[g, sample.int(V, 4)] <- stats::runif(4, 1, 3)
  X <- matrix(stats::rpois(40 * V, 0.15), 40, V, dimnames = list(NULL, words))
  go_problem_documents(O, X, D = 8, A = 3, max_authors = 2)
}

apc_fit <- function(p, iters, background, keep = FALSE, reselect = FALSE, ...) {
  old <- options(augmentedGP.go_keep_heldout = keep, augmentedGP.go_apc_reselect = reselect)
  on.exit(options(old))
  ga0(Matrix::Matrix(p$X, sparse = TRUE), p$authors, Matrix::Matrix(p$O, sparse = TRUE),
      documents = p$documents, pseudocount = 0.3, background = background,
      author_pseudocount = "auto", max_iter = iters, tol = 0, threads = 1, seed = 4, ...)
}

test_that("the held-out likelihood equals the dense reference and the chosen count maximises it", {
  # by default the counts are chosen once, from the first E-step (uniform profiles,
  # definitions only); with the internal option augmentedGP.go_apc_reselect before every
  # M-step, so a three-iteration run's last choice is made from the E-step with the
  # parameters that a two-iteration run ends with
  for (case in list(c(0, 0), c(0.4, 0), c(0, 1), c(0.4, 1))) {
    bg <- case[1]
    reselect <- case[2] == 1
    p <- apc_problem(11)
    f2 <- apc_fit(p, 2, bg, reselect = reselect)
    f3 <- apc_fit(p, 3, bg, keep = TRUE, reselect = reselect)
    fsel <- if (reselect) f2 else apc_fit(p, 1, bg)
    ids <- sprintf("a%d", seq_len(p$A))
    theta <- as.matrix(coef(fsel))[ids, ]
    P <- apc_word_probs(fsel, bg)
    pairs <- f3$heldout$pairs
    # every sentence of every author's documents, once per author
    n_pairs <- sum(vapply(seq_len(p$A), function(a) {
      sum(vapply(p$dauth, function(x) a %in% x, TRUE)[p$sdoc])
    }, 1))
    expect_equal(nrow(pairs), n_pairs)
    expect_true(all(pairs$fold %in% 0:1))
    expect_gt(length(unique(pairs$fold)), 1)
    cs <- c(1e-3, 0.05, 1, 7, 300, 1e6)
    ref <- apc_dense_heldout(p, theta, log(P), pairs, cs)
    K <- nrow(p$O)
    # the background constant sum_w n_w log(lambda beta_w) is left out of log S0
    bconst <- if (bg > 0) {
      as.vector(p$X %*% log(fsel$phi$lambda * fsel$phi$beta))[pairs$sentence]
    } else 0
    cpp <- sapply(cs, function(c) {
      log(pairs$rho + c) + pairs$ls0 + bconst - log(pairs$n_other + K * c)
    })
    expect_equal(cpp, ref, tolerance = 1e-10)
    # per author: the chosen count maximises the held-out likelihood (fine grid in R)
    grid <- 10^seq(-3, 8, by = 0.01)
    for (a in ids) {
      i <- pairs$author == a
      h <- function(c) sum(log(pairs$rho[i] + c) - log(pairs$n_other[i] + K * c))
      ca <- f3$heldout$prior_count[[a]]
      expect_equal(f3$author_prior_count[[a]], ca)
      expect_true(ca >= 1e-3 * (1 - 1e-12) && ca <= 1e8 * (1 + 1e-12))
      expect_equal(f3$heldout$value[[a]], h(ca), tolerance = 1e-12)
      expect_gte(h(ca), max(vapply(grid, h, 1)) - 1e-9 * abs(h(ca)))
      # and the dense reference agrees at the chosen count
      dense <- sum(apc_dense_heldout(p, theta, log(P), pairs[i, ], ca))
      expect_equal(h(ca) + sum(pairs$ls0[i] + if (bg > 0) bconst[i] else 0), dense,
                   tolerance = 1e-10)
    }
    # the last M-step's profiles use the chosen counts: (credit + c) / (N + K c) with
    # the credits of the E-step before it
    theta2 <- as.matrix(coef(f2))[ids, ]
    e <- go_dense_estep(p$X, log(apc_word_probs(f2, bg)), theta2, p$sdoc, p$dauth)
    credit <- go_dense_credit(e$R, theta2, p$sdoc, p$dauth)
    cc <- unname(f3$author_prior_count[ids])
    expect_equal(unname(as.matrix(coef(f3))[ids, ]),
                 (credit + cc) / (rowSums(credit) + K * cc), tolerance = 1e-10)
  }
})

# Authors writing sentences about terms drawn from a profile: `concentrated`
# authors each use 2 of the K terms, otherwise every sentence's term is drawn
# uniformly from all K terms. Sentences are 3 words of their term's definition.
apc_sim <- function(concentrated, seed, A = 6, S_a = 80, K = 40, V = 120) {
  set.seed(seed)
  words <- sprintf("w%03d", seq_len(V))
  O <- matrix(0, K, V, dimnames = list(sprintf("GO:%07d", seq_len(K)), words))
  for (g in seq_len(K)) O[g, sample.int(V, 5)] <- 1
  S <- A * S_a
  X <- matrix(0, S, V, dimnames = list(NULL, words))
  for (a in seq_len(A)) {
    mine <- if (concentrated) sample.int(K, 2) else seq_len(K)
    for (i in seq_len(S_a)) {
      g <- mine[sample.int(length(mine), 1)]
      w <- sample(which(O[g, ] > 0), 3, replace = TRUE)
      s <- (a - 1) * S_a + i
      for (j in w) X[s, j] <- X[s, j] + 1
    }
  }
  docs <- sprintf("d%03d", rep(seq_len(A * 4), each = S_a / 4))
  authors <- data.frame(document = unique(docs), author = sprintf("a%d", rep(seq_len(A), each = 4)))
  fit <- ga0(Matrix::Matrix(X, sparse = TRUE), authors, Matrix::Matrix(O, sparse = TRUE),
             documents = docs, pseudocount = 0.1, author_pseudocount = "auto",
             max_iter = 10, threads = 1, seed = 1)
  fit$author_prior_count
}

test_that("concentrated authors get a small prior count, flat ones a large one", {
  # 200 sentences per author, 40 terms: a fold holds about 100 sentences, 2.5 per term
  conc <- apc_sim(TRUE, 21, S_a = 200)
  flat <- apc_sim(FALSE, 22, S_a = 200)
  expect_true(all(conc < 0.01))
  # flat: the prior weighs at least as much as a fold's credits (K c >= N / 2) for
  # every author, and most profiles are practically flat
  expect_true(all(flat >= 2.5))
  expect_gt(stats::median(flat), 1e3)
})

test_that("EM with chosen counts never decreases the objective under the counts in use", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 8, n_documents = 40,
                            words_per_sentence = 3, noise = 0.4, seed = 5)
  fit <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 40, tol = 1e-9,
             author_pseudocount = "auto", threads = 2, seed = 1)
  # the objective after each M-step is at least the one before it under its counts
  expect_monotone_in_use <- function(f) {
    n <- f$iterations
    expect_gt(n, 3)
    gain <- f$objective[-1] - f$objective_prev[-n]
    expect_true(all(gain >= -1e-9 * abs(f$objective[-1])))
    n
  }
  n <- expect_monotone_in_use(fit)
  expect_true(all(is.finite(fit$objective_prev[-n])))
  expect_true(is.na(fit$objective_prev[n]))
  expect_equal(unname(Matrix::rowSums(coef(fit))), rep(1, nrow(coef(fit))), tolerance = 1e-12)
  # chosen once (the default), every iteration is scored with the chosen counts
  # (the first one again after the choice): the trace itself never decreases
  expect_equal(fit$objective_prev[-n], fit$objective[-n])
  expect_true(all(diff(fit$objective) >= -1e-9 * abs(fit$objective[-1])))
  # chosen again before every M-step: still monotone under the counts in use
  old <- options(augmentedGP.go_apc_reselect = TRUE)
  on.exit(options(old))
  re <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 40, tol = 1e-9,
            author_pseudocount = "auto", threads = 2, seed = 1)
  nr <- expect_monotone_in_use(re)
  expect_false(isTRUE(all.equal(re$objective_prev[-nr], re$objective[-nr])))
  # with a fixed count the two traces coincide
  fix <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 10,
             author_pseudocount = 0.5, threads = 2, seed = 1)
  m <- fix$iterations
  expect_equal(fix$objective_prev[-m], fix$objective[-m])
  expect_equal(unname(fix$author_prior_count), rep(0.5, length(fix$author_prior_count)))
  expect_null(fix$heldout)
})

test_that("bad values of author_pseudocount give clear errors", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 2, n_documents = 4, seed = 3)
  run <- function(...) go_annotator(sim$sentences, sim$authors, go_subset$terms,
                                    max_iter = 2, threads = 1, seed = 1, ...)
  for (bad in list("automatic", c("auto", "auto"), NA_character_, TRUE, list("auto"))) {
    expect_error(run(author_pseudocount = bad), "`author_pseudocount` must be", fixed = TRUE)
  }
  expect_error(run(author_pseudocount = -1), "`author_pseudocount` must be >= 0", fixed = TRUE)
  expect_error(run(author_pseudocount = "auto", em = "hard"),
               "`author_pseudocount = \"auto\"` needs `em = \"soft\"`", fixed = TRUE)
  expect_s3_class(run(author_pseudocount = "auto"), "go_annotator")
  # a single iteration makes no choice: uniform profiles, no held-out detail
  one <- go_annotator(sim$sentences, sim$authors, go_subset$terms, max_iter = 1, threads = 1,
                      seed = 1, author_pseudocount = "auto")
  expect_null(one$heldout)
  expect_equal(unname(one$theta_floor), rep(1 / length(one$go_id), 2))
})
