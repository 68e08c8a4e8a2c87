# The public count sets shared by the counts benchmarks (sourced from the package root):
# data frames with the count `y` and the inputs.
disc <- data.frame(y = as.numeric(datasets::discoveries), year = as.numeric(time(datasets::discoveries)))
ep <- MASS::epil
ep <- data.frame(y = ep$y, trt = ep$trt, lbase = ep$lbase, lage = ep$lage, period = ep$period)
qu <- MASS::quine
names(qu)[names(qu) == "Days"] <- "y"

# The negative-binomial benchmark's sets (bench_nb.R, kernel_choice.R): a data frame, the
# response and one formula per method. Ordered factors with a natural order become integer
# scores (numeric inputs for the GP and smooth terms); offsets are the log exposure.
nb_ins <- MASS::Insurance
nb_ins$Group <- as.integer(nb_ins$Group)
nb_ins$Age <- as.integer(nb_ins$Age)
nb_epil <- MASS::epil
nb_epil$trt <- factor(nb_epil$trt)
nb_sets <- list(
  quine = list(data = MASS::quine, y = "Days",
               augp = Days ~ Eth + Sex + Age + Lrn,
               gam = Days ~ Eth + Sex + Age + Lrn,  # factors only: no smooth term possible
               glm = Days ~ Eth + Sex + Age + Lrn),
  epil = list(data = nb_epil, y = "y",
              augp = y ~ base + age + trt + period,
              gam = y ~ s(base) + s(age) + trt + s(period, k = 4),
              glm = y ~ log(base) + age + trt + period),
  insurance = list(data = nb_ins, y = "Claims",
                   augp = Claims ~ District + Group + Age + offset(log(Holders)),
                   gam = Claims ~ District + s(Group, k = 4) + s(Age, k = 4) + offset(log(Holders)),
                   glm = Claims ~ District + Group + Age + offset(log(Holders))),
  warpbreaks = list(data = datasets::warpbreaks, y = "breaks",
                    augp = breaks ~ wool + tension,
                    gam = breaks ~ wool * tension,
                    glm = breaks ~ wool * tension)
)
