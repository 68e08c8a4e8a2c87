# Quick start: Polya-Gamma draws against the exact density.
library(augmentedGP)
set.seed(1)
w <- rpg(1e5, b = 2.5, c = 1.2, threads = 2)
png("augp_quickstart.png", width = 900, height = 600)
hist(w, breaks = 120, freq = FALSE, main = "PG(2.5, 1.2): 1e5 exact draws and dpg()",
     xlab = expression(omega), col = "grey85", border = "white")
curve(dpg(x, 2.5, 1.2), add = TRUE, lwd = 2, col = "firebrick", n = 500)
dev.off()
cat(sprintf("mean %.5f (exact %.5f), variance %.5f (exact %.5f)\nwrote augp_quickstart.png\n",
            mean(w), pg_mean(2.5, 1.2), var(w), pg_var(2.5, 1.2)))
