library(testthat)
library(augmentedGP)

test_check("augmentedGP")
