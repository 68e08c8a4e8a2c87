# posterior and coda conversions of augp fits: Gibbs draws, and draws from q(f) for VI.

skip_if_not_installed("posterior")

dr_d <- augp_toy(30)
dr_vi <- augp(y ~ x1, dr_d, seed = 5, control = augp_quick())
dr_gibbs <- short_gibbs(augp(y ~ x1, dr_d, method = "gibbs", seed = 5,
                 control = augp_control(iter = 80, warmup = 40, chains = 2, threads = 1,
                                        hyper_maxit = 20)))

test_that("every as_draws_* generic and summarise_draws work for Gibbs and VI fits", {
  convs <- list(as_draws = "draws_array", as_draws_array = "draws_array",
                as_draws_df = "draws_df", as_draws_matrix = "draws_matrix",
                as_draws_list = "draws_list", as_draws_rvars = "draws_rvars")
  for (f in list(dr_gibbs, dr_vi)) {
    S <- if (f$method == "gibbs") 80 else 1000
    for (fn in names(convs)) {
      dd <- getExportedValue("posterior", fn)(f)
      expect_s3_class(dd, convs[[fn]])
      expect_equal(posterior::ndraws(dd), S)
    }
    da <- posterior::as_draws_array(f)
    expect_equal(posterior::variables(da), sprintf("f[%d]", 1:30))
    expect_equal(posterior::nchains(da), if (f$method == "gibbs") 2 else 1)
    rv <- posterior::as_draws_rvars(f)
    expect_equal(length(rv$f), 30L)
    sm <- posterior::summarise_draws(f)
    expect_s3_class(sm, "draws_summary")
    expect_equal(sm$variable, sprintf("f[%d]", 1:30))
    expect_true(all(c("mean", "sd", "rhat", "ess_bulk") %in% names(sm)))
    # summary functions pass through
    expect_named(posterior::summarise_draws(f, "mean", "sd"), c("variable", "mean", "sd"))
    expect_equal(nrow(posterior::summarize_draws(f)), 30L)
  }
})

test_that("Gibbs draws are the stored draws; VI draws come from q(f)", {
  da <- posterior::as_draws_array(dr_gibbs)
  expect_equal(unclass(da)[, 2, 7], dr_gibbs$engine$draws[, 2, 7], ignore_attr = TRUE)
  expect_error(posterior::as_draws_array(dr_gibbs, ndraws = 10), "`ndraws`")
  dv <- posterior::as_draws_matrix(dr_vi, ndraws = 4000)
  expect_equal(dim(dv), c(4000L, 30L))
  m <- dr_vi$engine$mean
  s <- sqrt(dr_vi$engine$var)
  expect_true(all(abs(colMeans(dv) - m) < 5 * s / sqrt(4000)))
  expect_true(all(abs(apply(dv, 2, stats::sd) / s - 1) < 0.1))
  # the same draws as posterior_linpred() with the same seed
  expect_equal(unclass(posterior::as_draws_matrix(dr_vi, ndraws = 20, seed = 3)),
               posterior_linpred(dr_vi, ndraws = 20, seed = 3), ignore_attr = TRUE)
})

test_that("VI draws are seeded from the fit and leave the session's RNG alone", {
  set.seed(42)
  before <- .Random.seed
  a <- posterior::as_draws_df(dr_vi, ndraws = 50)
  b <- posterior::as_draws_df(dr_vi, ndraws = 50)
  cc <- posterior::as_draws_df(dr_vi, ndraws = 50, seed = 6)
  expect_identical(.Random.seed, before)
  expect_identical(a, b)
  expect_false(identical(a, cc))
  expect_equal(posterior::ndraws(a), 50)
})

test_that("several latent functions give f[i,class] variables; coda stays Gibbs only", {
  set.seed(6)
  d <- iris[sample(150, 30), ]
  v <- augp(Species ~ Petal.Length, d, control = augp_quick())
  dd <- posterior::as_draws_df(v, ndraws = 10)
  expect_equal(posterior::nvariables(dd), 90L)
  expect_true(all(c("f[1,setosa]", "f[30,virginica]") %in% posterior::variables(dd)))
  rv <- posterior::as_draws_rvars(v, ndraws = 10)
  expect_equal(dim(rv$f), c(30L, 3L))
  expect_equal(posterior::summarise_draws(v)$variable[31], "f[1,versicolor]")
  skip_if_not_installed("coda")
  expect_s3_class(coda::as.mcmc.list(dr_gibbs), "mcmc.list")
  expect_error(coda::as.mcmc.list(dr_vi), "method = \"gibbs\"")
})
