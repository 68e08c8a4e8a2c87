#' Control settings for fitting augmented GP models
#'
#' Collects the tuning constants used by [augp()] and [augp_fit()] and checks
#' them, so that a mistake is reported before any computation starts.
#'
#' @param maxit Maximum number of coordinate-ascent sweeps (variational
#'   inference) per evaluation of the hyperparameter search, and for the final
#'   updates at the learned hyperparameters.
#' @param tol Convergence tolerance on the relative change of the ELBO.
#' @param learn_hyper Learn the kernel hyperparameters (variance and
#'   lengthscales) by maximising the ELBO? If `FALSE` they stay as given.
#' @param shared_hyper For likelihoods with several latent functions
#'   (logistic-softmax, stick-breaking): `TRUE` (the default) uses one set of
#'   kernel hyperparameters for all latent functions (classes or sticks);
#'   `FALSE` gives every latent function its own copy of the kernel's
#'   hyperparameters (all starting from the same values), learned jointly by
#'   maximising the ELBO, which is then the sum of per-latent bounds. `coef()`
#'   then returns one row of hyperparameters per latent function. Ignored for
#'   binary and binomial likelihoods (one latent function); not available
#'   with sparse GPs (`inducing`).
#' @param hyper_maxit Maximum number of L-BFGS-B iterations of the
#'   hyperparameter search (per data level, see Details).
#' @param hyper_tol The hyperparameter search stops once an iteration raises
#'   the ELBO by less than about this many nats (or, if larger,
#'   `min(tol, 1e-6)` times the size of the ELBO: the accuracy to which each
#'   evaluation's variational updates converge).
#' @param hyper_polish Number of L-BFGS-B iterations on the full data after
#'   the subset levels (0, the default, keeps the hyperparameters found on
#'   the largest subset and only runs the variational updates on all data).
#'   Sparse fits search on all the data when it is above 0.
#' @param hyper_objective The objective that chooses the kernel
#'   hyperparameters: `NULL` (the default) lets
#'   the likelihood choose, `"direct"` for [logistic_softmax()] and
#'   `"augmented"` for every other likelihood. `"augmented"`:
#'   the ELBO of the augmented model, maximised by L-BFGS-B (see Details).
#'   `"direct"`: after that search, the kernel is chosen by the "direct"
#'   ELBO of the variational posterior \eqn{q(f)}, \eqn{E_q[\log p(y \mid
#'   f)] - KL(q(f) \| p(f))} with the likelihood itself rather than its
#'   augmented form, along a short ladder from the augmented optimum: first
#'   along the near-linear ridge (every variance divided by 4 and every
#'   lengthscale by 2, up to five times), then every lengthscale halved, up to
#'   four times, then every kernel variance doubled (or, if that does not
#'   help, halved), up to twice, each climb while it raises the direct ELBO
#'   (each rung a variational fit converged to a relative tolerance of 1e-4,
#'   scored after 5 rounds of the refinement when the fit is to be refined,
#'   see `refine`).
#'   Both are lower bounds on the log marginal likelihood for the same
#'   \eqn{q(f)}; the direct one is never below the augmented one, and the
#'   augmented bound loosens as the kernel gets more flexible (shorter
#'   lengthscales, larger variances), so its optimum can be far too smooth,
#'   notably for the logistic-softmax likelihood with many classes (on the
#'   11-class `mlbench::Vowel` data it chose a lengthscale of 8.9 standard
#'   deviations, the direct ladder 4.4, with test log loss 1.27 against
#'   0.92). The
#'   expectation uses quadrature or a closed form where the likelihood has
#'   one, otherwise 1000 fixed-seed Monte Carlo draws per point. [elbo()]
#'   still reports the augmented ELBO of the final fit. Sparse GPs fitted in
#'   full batches run the ladder at fixed inducing points (on the largest
#'   data subset of their search, see Details); minibatch (SVI) fits follow
#'   the direct ELBO's minibatch gradient in their last epochs instead (see
#'   `refine`); fits whose hyperparameters are not learned ignore it.
#' @param sample_hyper Gibbs fits (`method = "gibbs"`): sample the kernel
#'   hyperparameters with the latent functions ("full Bayes"), under the
#'   priors of [augp_prior()], instead of holding them at the values the
#'   variational fit learned. Each sweep draws them from their conditional
#'   given the auxiliary variables with the latent functions integrated out
#'   (a Metropolis-Hastings step on the log scale: an adaptive random walk
#'   during warm-up, then an independence proposal fitted to the warm-up
#'   draws, with a delayed-rejection second try when it is rejected; a kernel
#'   with at least five sampled parameters (one lengthscale per input, four or
#'   more inputs)
#'   moves by Hamiltonian Monte Carlo instead, its step size and mass matrix
#'   tuned in warm-up and then fixed), then
#'   the latent functions given them. Predictions then
#'   average over the hyperparameters; [hyper_draws()] returns their draws.
#'   Likelihood parameters that the fit learns (noise scales, the
#'   negative-binomial dispersion, cut points and others) are sampled too,
#'   given the latent functions, under the priors of [priors]; each
#'   likelihood's help page says which of its parameters are.
#' @param integrate_hyper `"auto"` (the default), `TRUE` or `FALSE`.
#'   Variational fits on the exact GP: average the predictions over the
#'   posterior of the hyperparameters instead of conditioning on the values
#'   the search learned. The posterior of their logarithms is approximated
#'   by a Gaussian at the learned values (the Laplace approximation: its
#'   covariance is the inverse of the negative Hessian of the search's
#'   objective, by finite differences of its gradient), and the fit keeps
#'   the posterior at `hyper_points` values drawn from it in antithetic
#'   pairs. For [gaussian_noise()] the hyperparameters are the kernel's and
#'   the noise scale, the objective is the exact log marginal likelihood and
#'   each point is the exact GP posterior (one Cholesky factorisation). For
#'   the other likelihoods they are the kernel's, the objective is the
#'   profiled ELBO the kernel search maximises (each evaluation a CAVI fit),
#'   and each point is the variational posterior at its kernel (refined as
#'   the fit is, see `refine`); parameters the likelihood learns (such as
#'   `r` of [negative_binomial()], `lambda` of [poisson_logistic()] or the
#'   class weights of [logistic_softmax()]) stay at their learned values.
#'   Predictions, fitted values, [log_lik()][augp-posterior],
#'   [simulate()][simulate.augp] and the draws average over the points;
#'   `summary()` shows the approximate posterior of each hyperparameter and
#'   [hyper_draws()] returns the points. Each point costs one fit when
#'   fitting and one prediction per prediction. The fit warns when
#'   importance weights show that the posterior is far from the Gaussian;
#'   full Bayes (`method = "gibbs"`, `sample_hyper = TRUE`) samples it
#'   instead. `"auto"` integrates where it was measured to raise the
#'   held-out log predictive density: [gaussian_noise()] and
#'   [poisson_logistic()] fits with at most 500 observations and learned
#'   hyperparameters; it conditions on the learned values otherwise
#'   (negative-binomial, binary and multi-class fits gained nothing
#'   measurable). `TRUE` for a sparse or Gibbs fit, or one without
#'   hyperparameters to learn, is an error.
#' @param hyper_points Number of hyperparameter values of `integrate_hyper`
#'   (a whole number >= 2; odd numbers are rounded up to even).
#' @param iter Number of Gibbs iterations per chain, warm-up included. Each
#'   chain keeps `floor((iter - warmup) / thin)` draws.
#' @param warmup Number of warm-up iterations discarded from each chain. The
#'   default, a quarter of `iter`, is shorter than the half that Stan uses
#'   because the chains start at the variational optimum rather than at
#'   random points, and warm-up tunes only the hyperparameter proposal of
#'   `sample_hyper = TRUE` (a few dimensions), not a step size and mass matrix
#'   for every latent value. With `sample_hyper = TRUE` and at least five
#'   sampled kernel parameters, a warm-up of at least 200 iterations leaves
#'   room to tune the Hamiltonian Monte Carlo move of the hyperparameters. Warm-up sweeps cost as much as kept ones, so a
#'   longer warm-up lowers the effective sample size per second. [augp()]
#'   warns (by split R-hat and bulk ESS) when the chains have not mixed; then raise
#'   `iter` (and `warmup` with it).
#' @param thin Keep every `thin`-th draw after warm-up.
#' @param chains Number of Gibbs chains.
#' @param threads Number of threads; `NULL` uses the option
#'   `augmentedGP.threads` (default 2).
#' @param jitter Value added to the diagonal of the kernel matrix for
#'   numerical stability (the engine may increase it; a warning then says so),
#'   relative to the scale of the latent function: for regression likelihoods,
#'   whose latent function is in the units of the response, `jitter` times the
#'   variance of the response, so that a fit does not depend on the units of
#'   the response. For sparse GPs (`inducing`) it is relative to the prior:
#'   `jitter` times the average prior variance at the inducing points is added
#'   to the diagonal of their kernel matrix.
#' @param verbose Report progress? All output is messages (standard error),
#'   never printed output. In interactive sessions a cli progress bar covers
#'   the whole fit (hyperparameter search, variational updates, Gibbs
#'   iterations, SVI steps) and ends at 100 percent; cli redraws it at most every
#'   `getOption("cli.progress_throttle")` milliseconds and shows it only once
#'   a fit has run for `getOption("cli.progress_show_after")` seconds (2 by
#'   default). In non-interactive sessions there is no bar: a header, one line
#'   per main stage and a final "done" line. The option
#'   `augmentedGP.progress_bar` (`TRUE`/`FALSE`) overrides the choice of the
#'   bar. Progress never changes the result: a fit gives the same values with
#'   `verbose = TRUE` or `FALSE`.
#' @param standardise Centre and scale the numeric inputs before fitting?
#'   The standardisation is internal: kernels are given and `coef()` reports
#'   them in the units of the data, and predictions take new data in those
#'   units, either way (see the Units section of [kernels]).
#' @param pred_draws Number of Monte Carlo draws from the variational
#'   posterior used to turn latent predictions into category probabilities for
#'   likelihoods with several latent functions (logistic-softmax,
#'   stick-breaking); the draws are seeded from `seed`, so predictions are
#'   reproducible.
#' @param parallel `"none"` (chains run on the package's own threads) or
#'   `"future"`: Gibbs chains (and variational restarts) run as futures
#'   through future.apply, so `future::plan()` spreads them across processes
#'   or machines; results equal a sequential run with the same seed.
#' @param restarts Number of independent variational fits from perturbed
#'   kernel starting values; the one with the highest ELBO is kept (for
#'   sparse fits with minibatches: the highest full-data ELBO).
#' @param batch_size Sparse GPs (`inducing`): minibatch size for stochastic
#'   variational inference; `NULL` uses full-data updates up to
#'   `full_batch_max` observations and minibatches of 1000 beyond. Minibatch
#'   fits run `svi_epochs` passes (no convergence test): `print()` and
#'   `summary()` report "SVI: E epochs" and [elbo()] the full-data ELBO from
#'   one final pass.
#' @param full_batch_max Sparse GPs: with `batch_size = NULL`, the largest
#'   number of observations fitted with full-data updates (each evaluation of
#'   the hyperparameter search then passes over all the data); larger data
#'   sets use minibatches.
#' @param svi_epochs,step_tau,step_kappa Sparse GPs: passes over the data and
#'   the step-size schedule \eqn{\rho_t = (t + \tau)^{-\kappa}} of the
#'   natural-gradient updates (`step_kappa` in (0.5, 1], as stochastic
#'   approximation requires).
#' @param svi_iter Sparse GPs: number of minibatch steps; `NULL` (the default)
#'   runs `svi_epochs` passes over the data instead, but at most 3000 steps
#'   (beyond 1 million rows at the default batch size fewer passes suffice,
#'   down to part of one pass). Fits that end with direct-ELBO epochs (see
#'   `refine`) run these on the direct ELBO, after one more pass (at most
#'   1000 steps) on the augmented bound; with `svi_iter` given, its first
#'   quarter is that augmented pass.
#' @param lr Sparse GPs: learning rate of the stochastic kernel
#'   hyperparameter steps (0 keeps them at their full-batch subsample values).
#'   The minibatch fit starts q(u) from the subsample fit (scaled up to all
#'   observations), keeps the kernel fixed during the first epoch, then takes
#'   Adam steps whose rate decays like the natural-gradient steps, keeping
#'   each log parameter within 3 of its subsample value.
#' @param hyper_subsample Sparse GPs, minibatch fits: number of randomly
#'   chosen observations whose full-batch fit gives the starting kernel
#'   hyperparameters (and inducing locations, if learned) and the starting
#'   q(u), scaled up to all observations. Larger subsamples give starting
#'   values closer to the full-data optimum; each evaluation of their search
#'   costs time linear in the subsample size. 0 starts the minibatch steps
#'   from the given kernel and the prior.
#' @param final_elbo Sparse GPs, minibatch fits: compute the full-data ELBO
#'   with one pass over the data after the last step ([elbo()] reports it;
#'   unknown with `FALSE`, when `elbo()` is an error). Always computed when `restarts > 1`, since it ranks
#'   the restarts.
#' @param block_size Sparse GPs: number of observations processed together in
#'   the passes over the data (the unit of work shared among threads; memory
#'   grows with `block_size` times the number of inducing points). Minibatches
#'   are made of whole blocks of `min(block_size, batch_size)` observations.
#' @param learn_inducing Sparse GPs: also learn the inducing locations? They
#'   add m x p parameters to the L-BFGS-B search, which then often needs more
#'   than the default `hyper_maxit` iterations (on 5000 binary points with
#'   m = 40 in 5 dimensions the ELBO was 11 nats higher with
#'   `hyper_maxit = 100` than with 30, in 2.2 s instead of 0.8 s).
#' @param inducing_method Sparse GPs: `"kmeans"` or `"random"` placement of
#'   the inducing points when `inducing` is a number.
#' @param ard Regression with [gaussian_noise()] on the exact GP, several
#'   inputs: whether the kernel gets one lengthscale per input (automatic
#'   relevance determination, ARD). It concerns the squared exponential and
#'   Matern kernels (and such parts of a sum or product) whose lengthscale
#'   was left at its default (`lengthscale = NULL`). The search first learns
#'   one lengthscale for all inputs (isotropic), then one per input starting
#'   from that optimum, maximising the log marginal likelihood plus a
#'   log-normal prior on each lengthscale centred at the isotropic value
#'   (standard deviation 1 on the log scale), each at most twice the range of
#'   its input (both keep the extra parameters from overfitting small data).
#'   `"auto"` (the default) keeps the ARD kernel when its leave-one-out log
#'   predictive density is higher than the isotropic kernel's (both computed
#'   in closed form on the smallest data level of the search, see Details).
#'   `TRUE`: always ARD. `FALSE`: the kernel as given. `print()` and
#'   `summary()` of the fit say what was chosen and why. Other likelihoods,
#'   sparse GPs and kernels with given lengthscales ignore it (give one
#'   lengthscale per input to ask for ARD).
#' @param refine Variational fits (`method = "vi"`) on the exact GP or a
#'   full-batch sparse GP: refine the Gaussian posterior \eqn{q(f)} after the
#'   coordinate-ascent fit by natural-gradient steps on the "direct" ELBO
#'   \eqn{E_q[\log p(y \mid f)] - KL(q(f) \| p(f))} of the likelihood itself
#'   instead of its augmented form (conjugate-computation variational
#'   inference, Khan and Lin 2017). `"auto"` (the default): up to 60 rounds
#'   when the fit supports it (below) and the augmented bound of the
#'   coordinate-ascent fit lies more than 0.02 nats per observation below the
#'   direct ELBO of its \eqn{q(f)}, i.e. when the augmentation is loose enough
#'   for the refinement to have something to gain (the logistic-softmax
#'   likelihood typically, not the Polya-Gamma-augmented binary ones, whose
#'   bound is nearly tight); `FALSE` or 0: no refinement; `TRUE`: up to 60
#'   rounds; a whole number: up to that many rounds (`TRUE` and numbers give
#'   an error where the refinement is not available). Each round moves every
#'   Gaussian site of \eqn{q(f)} (one precision and one linear term per point
#'   and latent function, the same form as the coordinate-ascent fit's)
#'   towards the expected curvature and gradient of \eqn{\log p(y \mid f)}
#'   under \eqn{q}, \eqn{\omega \leftarrow (1 - r)\omega + r E_q[-\partial^2
#'   \log p]}, \eqn{\kappa \leftarrow (1 - r)\kappa + r (E_q[\partial \log
#'   p] + E_q[-\partial^2 \log p] m)}; the step \eqn{r} starts at 1/2, doubles
#'   (up to 1) after a round that gains at its first try and is halved when a
#'   round would lower the direct ELBO, which therefore never falls (the
#'   expectations use the 1000 fixed-seed draws per point of the direct
#'   ELBO). It stops after the given number of rounds or once a round gains
#'   less than `tol` relatively. The kernel (and likelihood parameters) stay
#'   at the values the fit learned. The augmented bound's mean-field factors
#'   leave \eqn{q(f)} too narrow and too smooth for the logistic-softmax
#'   likelihood with many classes; the refinement takes it most of the way
#'   towards the exact posterior at the same kernel (`vignette("multiclass")`
#'   has the figures). Cost: per round, q Cholesky factorisations of n x n
#'   matrices (one coordinate-ascent sweep) plus 1000 evaluations of the
#'   likelihood per point. After a refinement, predictions and [elbo()] use
#'   the refined \eqn{q(f)} (`elbo()` then reports its direct ELBO, a lower
#'   bound on the log marginal likelihood like the augmented one and above
#'   it), and `print()` says how many rounds ran. Available for likelihoods
#'   that provide the expected derivatives ([logistic_softmax()],
#'   [bernoulli_logit()], [binomial_logit()]). On a sparse GP (`inducing`) it
#'   refines \eqn{q(u)} at the inducing points: the sites at the data enter
#'   its natural parameters as in the coordinate-ascent update,
#'   \eqn{K_{uu}^{-1} + \sum_i a_i \omega_i a_i'} and \eqn{\sum_i a_i
#'   (\kappa_i - \omega_i \mu_{0i})} (\eqn{a_i = K_{uu}^{-1} K_{u i}}, prior
#'   mean \eqn{\mu_0}), the direct ELBO then with \eqn{KL(q(u) \| p(u))}; per
#'   round one pass over the data (1000 likelihood evaluations per point) and
#'   q factorisations of m x m matrices. Minibatch (SVI) sparse fits
#'   (`batch_size` below n, or n above `full_batch_max`) refine on
#'   minibatches instead: after one pass on the augmented bound, their
#'   `svi_epochs` passes run on the direct ELBO, each step moving
#'   \eqn{q(u)} a
#'   natural-gradient step towards the minibatch estimate of the same sites
#'   (50 fixed-seed draws per point) and, when the kernel is learned, taking
#'   an Adam step along the minibatch gradient of the direct ELBO (each log
#'   parameter within 8 of its value at their start), so that the kernel
#'   moves from the augmented bound's optimum towards the direct ELBO's; a
#'   last pass over the data gives the direct ELBO that [elbo()] reports
#'   (200 draws per point). `"auto"` runs them for the likelihoods whose
#'   kernel is chosen by the direct ELBO (`hyper_objective`, the
#'   logistic-softmax one), `TRUE` or a number for any likelihood with the
#'   expected derivatives (not for likelihoods that learn their parameters).
#'   Gibbs fits start their chains from the coordinate-ascent fit; the setting
#'   applies there only to the variational fit that the non-bijective
#'   [logistic_softmax()] sampler's moves take as their reference.
#' @param kernel_search `"auto"` (the default), `TRUE` or `FALSE`. Fits
#'   with the likelihood's default kernel (`kernel = NULL`, no gp() terms in
#'   the formula) on the exact GP whose kernel is learned by the ELBO: choose
#'   the kernel per data set among five candidates, the default
#'   [kernel_se()], the squared exponential with one lengthscale per input
#'   (ARD, `kernel_se(lengthscale = rep(1, p))` for p design columns), Matern
#'   3/2 and 5/2 (`kernel_matern(nu = 1.5)`, `kernel_matern(nu = 2.5)`) and
#'   Matern 3/2 with ARD (`kernel_matern(nu = 1.5, lengthscale = rep(1,
#'   p))`); with a single input the ARD kernels are the isotropic ones and
#'   are left out. Each candidate is fitted variationally with its
#'   hyperparameters (and the likelihood's parameters) learned, with the
#'   same seed, and scored by its final ELBO minus one nat per kernel
#'   hyperparameter it learned (2 for an isotropic kernel, p + 1 with ARD),
#'   since the ELBO is maximised over them. The default kernel is kept unless
#'   another candidate's score beats the default's by more than 1 nat; then
#'   the best score wins. The fit is then the fit with the chosen kernel,
#'   equal to a fit with `kernel =` that kernel and the same seed;
#'   `refine` and `integrate_hyper` run on it alone, and a Gibbs fit
#'   (`method = "gibbs"`, whose kernel its variational fit learns) samples at
#'   it. Cost: about five fits (six for Gibbs, plus the sampling). `print()`
#'   says which kernel was chosen, `summary()` lists the candidates with
#'   their number of hyperparameters, ELBO and score, and the fit keeps them
#'   as the data frame `fit$kernel_search`. `"auto"` searches where the
#'   choice was measured not to lower the held-out log predictive density
#'   (and to raise it on some data sets): [negative_binomial()] and
#'   [poisson_logistic()] fits with at most 500 observations; other
#'   likelihoods keep their default kernel. `TRUE` searches for any
#'   likelihood, and is an error where the search cannot apply: a kernel
#'   given, a sparse GP (`inducing`), a kernel not learned (`learn_hyper =
#'   FALSE` or `hyper_maxit = 0`), `sample_hyper = TRUE`, or the
#'   [gaussian_noise()] fit on the exact GP (which chooses ARD by `ard`).
#' @details Regression with [gaussian_noise()] on the exact GP learns the
#'   kernel and the noise scale together by maximising the exact log marginal
#'   likelihood (a quasi-Newton search with exact gradients, each evaluation
#'   one Cholesky factorisation and inverse, no variational updates): from
#'   n >= 800 on nested subsets as below, each level starting from the
#'   previous one's optimum and curvature, up to `5 * hyper_maxit` iterations
#'   per subset level, then a polish on all the data of
#'   `max(1, hyper_polish, floor(8 * (1000 / n)^3))` iterations (8 at
#'   n = 1000, fewer as an evaluation gets dearer, 1 at n = 2000).
#'
#'   Kernel hyperparameters are learned by maximising the profiled
#'   ELBO (the ELBO at the optimal variational distribution, whose gradient is
#'   available in closed form at the coordinate-ascent fixed point) with
#'   L-BFGS-B. For n >= 800 the search runs first on nested, evenly spaced
#'   subsets of about half the size each (from 400-800 points upwards; each
#'   level starts from the previous optimum), since each evaluation costs
#'   O(m^3) in the subset size m (q m^3 with q latent functions: the smallest
#'   level shrinks as q^(-1/3)); the full data then run the variational
#'   updates to convergence, plus `hyper_polish` search iterations. Sparse GPs
#'   fitted in full batches (`inducing`, up to `full_batch_max` observations) use the
#'   same profiled search, each evaluation re-using the best \eqn{q(u)} found
#'   so far. Its cost is linear in n (q n m^2 per sweep with m inducing
#'   points), so from n >= 2 max(2000, m) (and `hyper_polish = 0`) it runs
#'   on evenly spaced subsets halving from n/4 (n/2 below twice that limit)
#'   down to that size, each level
#'   starting from the previous one's optimum and \eqn{q(u)}; the full data then run the
#'   variational updates at the largest subset's kernel, from its
#'   \eqn{q(u)} scaled up to all observations. Larger data sets take
#'   minibatch steps (SVI) from a full-batch fit on a subsample.
#' @return A list of class `augp_control`.
#' @examples
#' augp_control(maxit = 50, chains = 1)
#' @export
augp_control <- function(maxit = 200, tol = 1e-6, learn_hyper = TRUE, shared_hyper = TRUE,
                         hyper_maxit = 30,
                         hyper_tol = 1e-3, hyper_polish = 0,
                         hyper_objective = NULL, sample_hyper = FALSE, iter = 1000,
                         warmup = floor(iter / 4),
                         thin = 1, chains = 2,
                         threads = NULL, jitter = 1e-6, verbose = FALSE,
                         standardise = TRUE, pred_draws = 1000,
                         parallel = c("none", "future"), restarts = 1, batch_size = NULL,
                         full_batch_max = 20000, svi_epochs = 3, svi_iter = NULL,
                         step_tau = 1, step_kappa = 0.6, lr = 0.02, hyper_subsample = 2000,
                         final_elbo = TRUE, block_size = 256,
                         learn_inducing = FALSE, inducing_method = c("kmeans", "random"),
                         ard = "auto", refine = "auto", integrate_hyper = "auto",
                         hyper_points = 40, kernel_search = "auto") {
  control_build(as.list(environment()))
}

# Check the settings of augp_control() (a complete named list) and make the
# augp_control object. Error messages name each setting as `prefix` + its name.
control_build <- function(s, prefix = "") {
  nm <- function(x) paste0(prefix, x)
  out <- list(
    maxit = as.integer(check_count(s$maxit, nm("maxit"), min = 1)),
    tol = check_number(s$tol, nm("tol"), min = 0, min_open = TRUE),
    learn_hyper = check_flag(s$learn_hyper, nm("learn_hyper")),
    shared_hyper = check_flag(s$shared_hyper, nm("shared_hyper")),
    hyper_maxit = as.integer(check_count(s$hyper_maxit, nm("hyper_maxit"))),
    hyper_tol = check_number(s$hyper_tol, nm("hyper_tol"), min = 0, min_open = TRUE),
    hyper_polish = as.integer(check_count(s$hyper_polish, nm("hyper_polish"))),
    hyper_objective = if (!is.null(s$hyper_objective)) {
      check_choice(s$hyper_objective, nm("hyper_objective"), c("augmented", "direct"))
    },
    sample_hyper = check_flag(s$sample_hyper, nm("sample_hyper")),
    iter = as.integer(check_count(s$iter, nm("iter"), min = 1)),
    warmup = as.integer(check_count(s$warmup, nm("warmup"))),
    thin = as.integer(check_count(s$thin, nm("thin"), min = 1)),
    chains = as.integer(check_count(s$chains, nm("chains"), min = 1)),
    threads = resolve_threads(s$threads, nm("threads")),
    jitter = check_number(s$jitter, nm("jitter"), min = 0),
    verbose = check_flag(s$verbose, nm("verbose")),
    standardise = check_flag(s$standardise, nm("standardise")),
    pred_draws = as.integer(check_count(s$pred_draws, nm("pred_draws"), min = 1)),
    parallel = check_choice(s$parallel, nm("parallel"), c("none", "future")),
    restarts = as.integer(check_count(s$restarts, nm("restarts"), min = 1)),
    batch_size = check_count_or_null(s$batch_size, nm("batch_size"), min = 1),
    full_batch_max = check_count(s$full_batch_max, nm("full_batch_max")),
    svi_epochs = check_number(s$svi_epochs, nm("svi_epochs"), min = 0, min_open = TRUE),
    svi_iter = check_count_or_null(s$svi_iter, nm("svi_iter"), min = 1),
    step_tau = check_number(s$step_tau, nm("step_tau"), min = 0),
    step_kappa = check_number(s$step_kappa, nm("step_kappa"), min = 0.5, max = 1,
                              min_open = TRUE),
    lr = check_number(s$lr, nm("lr"), min = 0),
    hyper_subsample = check_count(s$hyper_subsample, nm("hyper_subsample")),
    final_elbo = check_flag(s$final_elbo, nm("final_elbo")),
    block_size = as.integer(check_count(s$block_size, nm("block_size"), min = 1)),
    learn_inducing = check_flag(s$learn_inducing, nm("learn_inducing")),
    inducing_method = check_choice(s$inducing_method, nm("inducing_method"),
                                   c("kmeans", "random")),
    ard = check_ard(s$ard, nm("ard")),
    refine = check_refine(s$refine, nm("refine")),
    integrate_hyper = check_auto_flag(s$integrate_hyper, nm("integrate_hyper")),
    hyper_points = as.integer(check_count(s$hyper_points, nm("hyper_points"), min = 2)),
    kernel_search = check_auto_flag(s$kernel_search, nm("kernel_search")))
  if (out$warmup >= out$iter) {
    stop(sprintf("`%s` (%s) must be smaller than `%s` (%s).", nm("warmup"), out$warmup,
                 nm("iter"), out$iter), call. = FALSE)
  }
  if (out$iter - out$warmup < out$thin) {
    stop(sprintf("`%s` leaves no draws: need `iter - warmup >= thin`.", nm("thin")),
         call. = FALSE)
  }
  if (out$parallel == "future" && !requireNamespace("future.apply", quietly = TRUE)) {
    stop(sprintf("`%s = \"future\"` needs the future.apply package.", nm("parallel")),
         call. = FALSE)
  }
  structure(out, class = "augp_control")
}

# Number of draws each Gibbs chain keeps.
control_kept_draws <- function(control) {
  as.integer(floor((control$iter - control$warmup) / control$thin))
}

#' @export
print.augp_control <- function(x, ...) {
  cat("<augp_control>\n")
  v <- vapply(unclass(x), function(e) paste(format(e), collapse = " "), "")
  cat(paste0("  ", format(names(v)), " ", v), sep = "\n")
  invisible(x)
}

# An augp_control object as is, or a (possibly partial) list of its settings
# completed with augp_control()'s defaults; NULL gives the defaults.
as_augp_control <- function(control) {
  if (inherits(control, "augp_control")) return(control)
  if (is.null(control)) control <- list()
  if (is.list(control)) {
    control <- control[!vapply(control, is.null, TRUE)]
    if (length(control) && (is.null(names(control)) || any(names(control) == ""))) {
      stop("`control`: every setting must be named.", call. = FALSE)
    }
    bad <- setdiff(names(control), names(formals(augp_control)))
    if (length(bad)) {
      stop(sprintf("`control` has unknown setting(s): %s.", paste(bad, collapse = ", ")),
           call. = FALSE)
    }
    return(control_build(control_settings(control), prefix = "control$"))
  }
  stop("`control` must be made by augp_control() (or be a list of its settings).",
       call. = FALSE)
}

# The settings of augp_control(), unchecked, with those in `control` replacing the
# defaults; a default that depends on another setting (`warmup` on `iter`) sees the
# given value.
control_settings <- function(control) {
  f <- augp_control
  body(f) <- quote(as.list(environment()))
  do.call(f, control)
}

# The `ard` setting: "auto", TRUE or FALSE.
# The refine setting: "auto", or a number of rounds (FALSE 0, TRUE 60, or a whole
# number >= 0).
check_refine <- function(x, arg) {
  if (identical(x, "auto")) return("auto")
  if (is.logical(x) && length(x) == 1L && !is.na(x)) return(if (x) REFINE_AUTO_ROUNDS else 0L)
  if (is.numeric(x) && length(x) == 1L && is.finite(x) && x >= 0 && x == round(x) && x <= 1e6) {
    return(as.integer(x))
  }
  stop(sprintf("`%s` must be \"auto\", TRUE, FALSE or a whole number of rounds (>= 0).", arg),
       call. = FALSE)
}

# A setting that is "auto", TRUE or FALSE.
check_auto_flag <- function(x, arg) {
  if (identical(x, "auto")) return("auto")
  if (is.logical(x) && length(x) == 1L && !is.na(x)) return(x)
  stop(sprintf("`%s` must be \"auto\", TRUE or FALSE.", arg), call. = FALSE)
}

check_ard <- function(x, arg) {
  if (identical(x, "auto")) return("auto")
  if (is.logical(x) && length(x) == 1L && !is.na(x)) return(x)
  stop(sprintf("`%s` must be \"auto\", TRUE or FALSE.", arg), call. = FALSE)
}
