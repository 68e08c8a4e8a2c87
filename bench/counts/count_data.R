# The public count sets shared by the counts benchmarks (sourced from the package root):
# data frames with the count `y` and the inputs.
disc <- data.frame(y = as.numeric(datasets::discoveries), year = as.numeric(time(datasets::discoveries)))
ep <- MASS::epil
ep <- data.frame(y = ep$y, trt = ep$trt, lbase = ep$lbase, lage = ep$lage, period = ep$period)
qu <- MASS::quine
names(qu)[names(qu) == "Days"] <- "y"
