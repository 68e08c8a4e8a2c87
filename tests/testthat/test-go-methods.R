sim <- simulate_go_corpus(go_subset$terms, n_authors = 5, n_documents = 30, seed = 31)
fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms,
                    hierarchy = go_subset$hierarchy, max_iter = 15, threads = 1, seed = 1)

test_that("print, summary, top_terms and plots work on a fit", {
  expect_output(print(fit), "go_annotator")
  sm <- summary(fit)
  expect_s3_class(sm, "summary.go_annotator")
  expect_output(print(sm), "Most frequent terms")
  expect_equal(sum(fit$pi), 1, tolerance = 1e-10)
  tt <- top_terms(fit, "A0001", n = 4)
  expect_equal(nrow(tt), 4)
  expect_true(all(diff(tt$probability) <= 0))
  expect_equal(tt$probability[1], max(fit$theta["A0001", ]))
  expect_error(top_terms(fit, "nobody"), "`author`")
  p <- ggplot2::autoplot(fit)
  expect_s3_class(p, "ggplot")
  expect_equal(nrow(p$data), fit$iterations)
  p2 <- ggplot2::autoplot(fit, type = "author", author = "A0002", n = 3)
  expect_equal(nrow(p2$data), 3)
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(fit))
  expect_invisible(plot(fit, type = "author"))
})

test_that("predict propagates probabilities to ancestors (true-path rule)", {
  new <- sim$sentences[1:5, ]
  K <- length(fit$go_id)
  flat <- predict(fit, new, sim$authors, top = K, propagate = FALSE, threads = 1)
  prop <- predict(fit, new, sim$authors, top = K, propagate = TRUE, threads = 1)
  # root of the biological-process ontology collects all the mass
  root <- prop[prop$go_id == "GO:0008150", ]
  expect_equal(root$probability, rep(1, 5), tolerance = 1e-6)
  # every parent scores at least as high as each child
  h <- go_subset$hierarchy
  for (s in 1:5) {
    ps <- stats::setNames(prop$probability[prop$sentence == s], prop$go_id[prop$sentence == s])
    pc <- ps[h$child]
    pp <- ps[h$parent]
    ok <- !is.na(pc)
    expect_true(all(!is.na(pp[ok]) & pp[ok] >= pc[ok] - 1e-12))
  }
  # without propagation, probabilities of one sentence sum to one
  expect_equal(sum(flat$probability[flat$sentence == 2]), 1, tolerance = 1e-6)
  expect_error(predict(fit, new, sim$authors, top = 0), "`top`")
})

test_that("read_go_sqlite errors clearly and reads GO.db when installed", {
  expect_error(read_go_sqlite(tempfile()), "`path` must be the path")
  path <- system.file("extdata", "GO.sqlite", package = "GO.db")
  skip_if(!nzchar(path), "GO.db not installed")
  skip_if_not_installed("RSQLite")
  go <- read_go_sqlite(path, ontology = "CC")
  expect_gt(nrow(go$terms), 1000)
  expect_true(all(go$terms$ontology == "CC"))
  expect_true(all(go$hierarchy$child %in% go$terms$go_id))
})

test_that("the shipped GO subset is consistent", {
  expect_named(go_subset, c("terms", "hierarchy"))
  expect_false(anyDuplicated(go_subset$terms$go_id) > 0)
  expect_true(all(c(go_subset$hierarchy$child, go_subset$hierarchy$parent) %in%
                    go_subset$terms$go_id))
  expect_gt(nrow(go_subset$terms), 200)
})
