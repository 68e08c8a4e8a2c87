# Dense reference of EM with a background word distribution, written from the
# formulas: the words of a sentence with term G are drawn from
# (1 - lambda) phi_G + lambda beta; phi_G has prior Dirichlet(O_G + 1) (uniform
# when it has no counts at all), beta has prior Dirichlet(colSums(O) + pc + 1),
# lambda is flat.
go_dense_em_bg <- function(X, O, sdoc, dauth, n_authors, pc, lambda0, iters) {
  K <- nrow(O)
  V <- ncol(O)
  theta <- matrix(1 / K, n_authors, K)
  C <- O
  lam <- lambda0
  beta <- (colSums(O) + colSums(X) + pc) / (sum(O) + sum(X) + V * pc)
  obj <- numeric(0)
  lams <- numeric(0)
  for (it in seq_len(iters)) {
    Z <- rowSums(C)
    phi <- C / ifelse(Z > 0, Z, 1)
    phi[Z == 0, ] <- 1 / V
    P <- (1 - lam) * phi + lam * matrix(beta, K, V, byrow = TRUE)
    e <- go_dense_estep(X, log(P), theta, sdoc, dauth)
    R <- e$R
    obj[it] <- sum(e$lse) + sum(O[O > 0] * log(phi[O > 0])) + sum((colSums(O) + pc) * log(beta))
    lams[it] <- lam
    if (it == iters) break
    credit <- go_dense_credit(R, theta, sdoc, dauth)
    theta <- credit / rowSums(credit)
    Tc <- as.matrix(t(R) %*% X) * ((1 - lam) * phi / P)  # expected words from the terms
    B <- colSums(X) - colSums(Tc)                         # expected background words
    lam <- sum(B) / sum(X)
    beta <- (B + colSums(O) + pc) / (sum(B) + sum(O) + V * pc)
    C <- O + Tc
  }
  list(theta = theta, R = R, objective = obj, lambda = lams)
}

bg_problem <- function(seed) {
  set.seed(seed)
  S <- 50; V <- 20; K <- 6; D <- 10; A <- 4
  words <- sprintf("w%02d", seq_len(V))
  O <- matrix(stats::rpois(K * V, 0.5), K, V, dimnames = list(sprintf("GO:%07d", seq_len(K)), words))
  O[K, ] <- 0  # a term without definition words
  X <- matrix(stats::rpois(S * V, 0.3), S, V, dimnames = list(NULL, words))
  X[, 1] <- X[, 1] + 2  # a frequent "function word"
  go_problem_documents(O, X, D, A)
}

test_that("EM with a background distribution equals the dense reference", {
  for (seed in 1:2) {
    p <- bg_problem(seed)
    fit <- go_annotator(Matrix::Matrix(p$X, sparse = TRUE), p$authors,
                        Matrix::Matrix(p$O, sparse = TRUE), documents = p$documents,
                        pseudocount = 0.2, background = 0.4, max_iter = 6, tol = 0,
                        author_pseudocount = 0, definition_weight = 1,
                        threads = 2, seed = 1)
    ref <- go_dense_em_bg(p$X, p$O, p$sdoc, p$dauth, p$A, pc = 0.2, lambda0 = 0.4, iters = 6)
    expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
    expect_equal(unname(as.matrix(fit$responsibilities)), unname(ref$R), tolerance = 1e-10)
    th <- as.matrix(coef(fit))[sprintf("a%d", seq_len(p$A)), ]
    expect_equal(unname(th), ref$theta, tolerance = 1e-10)
    # the weight is learned: the last M-step's value is the fit's weight
    fit7 <- go_annotator(Matrix::Matrix(p$X, sparse = TRUE), p$authors,
                         Matrix::Matrix(p$O, sparse = TRUE), documents = p$documents,
                         pseudocount = 0.2, background = 0.4, max_iter = 7, tol = 0,
                         author_pseudocount = 0, definition_weight = 1,
                         threads = 1, seed = 1)
    ref7 <- go_dense_em_bg(p$X, p$O, p$sdoc, p$dauth, p$A, pc = 0.2, lambda0 = 0.4, iters = 7)
    expect_equal(fit7$background_weight, ref7$lambda[7], tolerance = 1e-10)
    expect_false(isTRUE(all.equal(ref7$lambda[7], 0.4)))
    # predict() on the training sentences with their authors reproduces the last E-step
    # (the fit after max_iter = 7 used the parameters of M-step 6)
    pr <- predict(fit7, Matrix::Matrix(p$X, sparse = TRUE), authors = p$authors,
                  documents = p$documents, top = 6, threads = 1)
    Rp <- as.matrix(Matrix::sparseMatrix(i = pr$sentence, j = match(pr$go_id, fit7$go_id),
                                         x = pr$probability, dims = dim(ref7$R)))
    expect_equal(Rp, unname(ref7$R), tolerance = 1e-8)
  }
})

test_that("EM with a background distribution never decreases its objective", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 8, n_documents = 40,
                            words_per_sentence = 4, noise = 0.4, seed = 5)
  fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms, background = 0.3,
                      max_iter = 40, tol = 0, threads = 2, seed = 1)
  d <- diff(fit$objective)
  expect_true(all(d >= -1e-9 * abs(fit$objective[-1])))
  expect_gt(fit$objective[40], fit$objective[1])
  expect_gt(fit$background_weight, 0)
  expect_lt(fit$background_weight, 1)
  expect_error(go_annotator(sim$sentences, sim$authors, go_subset$terms, background = 1),
               "`background` must be in \\[0, 1\\)")
  expect_error(go_annotator(sim$sentences, sim$authors, go_subset$terms, background = NA),
               "`background` must be a single finite number")
})
