# Shared by the bench drivers: run one benchmark case as its own R process under
# /usr/bin/time -v and read what it prints.
#   run_timed(script, args) runs `Rscript script run args...`; the case prints one line
#   "RESULT v1 | v2 | ..." (or "RESULT v1 v2 ..." when sep = " "). Returns the fields as
#   character (NULL, with the tail of the log as a message, if the case printed none)
#   with attribute peak_mb: the process's maximum resident set size in MB.
run_timed <- function(script, args, sep = "|") {
  log <- tempfile()
  out <- system2("/usr/bin/time", c("-v", file.path(R.home("bin"), "Rscript"), script, "run", args),
                 stdout = TRUE, stderr = log)
  res <- grep("^RESULT", out, value = TRUE)
  err <- readLines(log)
  rss <- grep("Maximum resident set size", err, value = TRUE)
  if (!length(res)) {
    message("no result for ", paste(args, collapse = " "), "\n",
            paste(utils::tail(err, 20), collapse = "\n"))
    return(NULL)
  }
  v <- trimws(strsplit(trimws(sub("^RESULT ", "", res[1])), sep, fixed = TRUE)[[1]])
  structure(v, peak_mb = if (length(rss)) as.numeric(sub(".*: ", "", rss[1])) / 1024 else NA_real_)
}
