# The GO author plot: labels (GO id and name) are never cut off.

test_that("the author plot labels terms by id and name and fits them on small devices", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 3, n_documents = 10, seed = 2)
  fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms, max_iter = 5,
                      threads = 1)
  tt <- top_terms(fit, "A0001", n = 4)
  p <- autoplot(fit, type = "author", author = "A0001", n = 4)
  expect_s3_class(ggplot2::ggplot_build(p), "ggplot_built")
  lab <- levels(p$data$label)
  expect_equal(rev(lab), make.unique(paste(tt$go_id, ifelse(nchar(tt$name) > 40,
                                                            paste0(substr(tt$name, 1, 39), "..."),
                                                            tt$name))))
  expect_true(all(startsWith(rev(lab), tt$go_id)))
  expect_identical(p$theme$plot.title$face, "bold")
  # base graphics: the left margin is sized to the labels, shrinking them on a small
  # device instead of failing or clipping; par() is restored
  f <- tempfile(fileext = ".png")
  grDevices::png(f, width = 240, height = 200)
  old <- graphics::par("mai")
  expect_invisible(plot(fit, type = "author", author = "A0001", n = 6))
  expect_equal(graphics::par("mai"), old)
  grDevices::dev.off()
  expect_gt(file.size(f), 0)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(fit, type = "author"))
})
