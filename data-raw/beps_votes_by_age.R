# Builds inst/extdata/beps_votes_by_age.csv, the count table used by
# vignettes/stick-breaking.Rmd, from the data set `BEPS` of the R package carData
# (British Election Panel Study 1997-2001: 1525 respondents' vote intention with
# their age; carData is licensed GPL (>= 2); original source: the British
# Election Panel Study, as distributed with J. Fox and S. Weisberg, "An R
# Companion to Applied Regression"). Only a derived table of counts is shipped:
# respondents were split at random into a training set (2/3) and a test set
# (1/3), and each set's votes were counted by year of age.
#   Rscript data-raw/beps_votes_by_age.R   (from the package root)
data("BEPS", package = "carData")
set.seed(1997)
beps <- BEPS[, c("vote", "age")]
beps$set <- ifelse(stats::runif(nrow(beps)) < 2 / 3, "train", "test")
tab <- as.data.frame.matrix(table(interaction(beps$set, beps$age, sep = ":", drop = TRUE),
                                  beps$vote))
key <- do.call(rbind, strsplit(rownames(tab), ":", fixed = TRUE))
out <- data.frame(set = key[, 1], age = as.integer(key[, 2]),
                  Conservative = tab[, "Conservative"], Labour = tab[, "Labour"],
                  LiberalDemocrat = tab[, "Liberal Democrat"])
out <- out[order(out$set != "train", out$age), ]
con <- file(file.path("inst", "extdata", "beps_votes_by_age.csv"), "w")
writeLines(c("# Vote intention counts by age, British Election Panel Study 1997-2001,",
             "# derived from carData::BEPS (GPL >= 2) by data-raw/beps_votes_by_age.R:",
             "# respondents split at random 2:1 into train/test sets, counted by year of age."),
           con)
utils::write.csv(out, con, row.names = FALSE)
close(con)
cat(sprintf("%d rows (%d train, %d test respondents)\n", nrow(out),
            sum(out[out$set == "train", 3:5]), sum(out[out$set == "test", 3:5])))
