// Expectation-maximisation for the document -> author -> GO term -> sentence
// model (see MATH.md, last section). Plain C++: no R or Rcpp API anywhere in
// this file or in go_annotator.cpp. Parallel sections are run through a
// `Runner` supplied by the adapter layer, and every parallel section writes to
// per-block outputs whose layout depends only on the data, so results never
// depend on the number of threads.
#ifndef AUGP_GO_ANNOTATOR_H
#define AUGP_GO_ANNOTATOR_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace augp {
namespace go {

// runner(n, body): call body(begin, end) on disjoint ranges covering [0, n).
using Body = std::function<void(std::size_t, std::size_t)>;
using Runner = std::function<void(std::size_t, const Body&)>;

struct Entry {
  int g;     // term index
  double v;  // value
};
using SparseVec = std::vector<Entry>;  // sorted by term index

// A term distribution stored as a floor plus sparse increments:
// theta_G = floor + inc_G, with inc_G = 0 for the terms not in `inc` (entries
// sorted by term, inc_G > 0). With a symmetric Dirichlet prior count a, the
// M-step gives floor = a / (a K + N) and inc_G = counts_G / (a K + N), so the
// increments are as sparse as the responsibilities. The uniform distribution
// is floor = 1 / K without increments; without a prior the floor is 0.
struct Profile {
  double floor = 0.0;
  SparseVec inc;
};

// Column-compressed sparse matrix: column j holds rows idx[p[j] .. p[j+1]).
struct Csc {
  std::vector<std::size_t> p;
  std::vector<int> idx;
  std::vector<double> val;
  std::size_t ncol() const { return p.empty() ? 0 : p.size() - 1; }
};

struct Corpus {
  int n_terms = 0;
  int n_words = 0;
  Csc sentences;                     // words x sentences, sentences grouped by document
  std::vector<std::size_t> doc_ptr;  // sentences of document d: [doc_ptr[d], doc_ptr[d+1])
  Csc doc_authors;                   // column d = profile (author) indices of document d
  Csc definitions;                   // terms x words definition counts (column = word)
};

struct Control {
  double pseudocount = 0.01;        // Dirichlet prior on phi: alpha - 1 = definition counts + pseudocount
  double author_pseudocount = 0.0;  // Dirichlet prior on theta: alpha - 1 = author_pseudocount
  // Per-profile prior count chosen by held-out word likelihood after the first
  // E-step, or after every one with reselect_author_pc (see choose_author_pc and
  // go_annotator.cpp); author_pseudocount is then unused.
  bool auto_author_pc = false;
  double author_pc_lo = 1e-3;  // search interval of the chosen prior count
  double author_pc_hi = 1e8;
  bool keep_heldout = false;   // keep the last selection's per-sentence detail (tests)
  bool reselect_author_pc = false;  // choose again before every M-step (else only the first)
  bool hard = false;
  int max_iter = 100;
  double tol = 1e-6;
  double truncate = 0.0;  // responsibilities below this are dropped (0 = exact EM)
  std::uint64_t seed = 0;
  double background = 0.0;  // > 0: background mixture, initial weight lambda (learned)
  // E-step: a sentence word with at least this many term entries is not
  // traversed (its terms sharing no other word are summed in closed form); 0: off
  int skip_min = 256;
};

// Word-indexed view of the current phi: for word w, the terms with a positive
// count C_Gw = (expected corpus count) + (definition count) and log1p(C_Gw / pc).
struct Phi {
  std::vector<std::size_t> wp;
  std::vector<int> g;
  std::vector<double> count;  // C_Gw
  std::vector<double> defn;   // definition part O_Gw
  std::vector<double> l1p;    // log1p(C_Gw / pc)
  std::vector<double> logpz;  // per term: log(pc / Z_G), Z_G = sum_w C_Gw + V pc
  double log_prior = 0.0;     // sum_G sum_w (O_Gw + pc) log phi_Gw
  // background mixture (lambda > 0 only): l1p = log1p((1 - lambda) phi_Gw / (lambda beta_w)),
  // logpz = 0. A term with Z_G = 0 has the uniform phi_G = 1 / V: it has no
  // entries, is flagged in `uniform`, and its value for word w is
  // lu_w = log1p((1 - lambda) / (V lambda beta_w)), the same for all such terms.
  double lambda = 0.0;
  std::vector<char> uniform;  // per term (empty without the background: no such terms)
  std::size_t n_uniform = 0;
  std::vector<double> lu;     // per word
  std::vector<double> beta;   // background word distribution
  std::vector<double> zsum;   // Z_G = sum_w C_Gw
};

// Sparse responsibilities, one row per sentence (CSR).
struct Resp {
  std::vector<std::size_t> p;
  std::vector<int> g;
  std::vector<double> r;
  std::vector<int> top;      // argmax term per sentence (deterministic ties)
  std::vector<double> top_r; // its responsibility
  double loglik = 0.0;       // sum_s log sum_G P(G|D) P(s|G)
  double n_full = 0.0;       // sentences scored against every term (see e_step)
  // Only with Control::auto_author_pc (soft EM), per sentence: ls0 = log S0_s,
  // S0_s = sum over all terms G of L_sG, L_sG = P(s | G) (without the background
  // constant shared by all terms), and lflat = log(k_s p_s / S0_s), p_s =
  // sum_G P(G | d) L_sG and k_s the posterior mass kept in the stored row, so
  // that L_sG / S0_s = r_sG exp(lflat_s) / P(G | d) for a stored entry r_sG.
  std::vector<double> ls0;
  std::vector<double> lflat;
};

// Build phi from definition counts plus the sentences' expected counts (resp
// may be empty: definitions only).
Phi build_phi(const Corpus& c, const Resp* resp, const Csc& word_sent, double pc,
              const Runner& run);

// Background mixture: word distribution of term G is (1 - lambda) phi_G + lambda beta.
// Without resp: phi from the definitions, beta from all definition and corpus words,
// lambda = lambda0. With resp: the M-step given the previous parameters `old`.
Phi build_phi_bg(const Corpus& c, const Resp* resp, const Phi* old, const Csc& word_sent,
                 double pc, double lambda0, const Runner& run);

// sum over the corpus words of n_w log(lambda beta_w): the part of the background
// log likelihood shared by all terms.
double background_constant(const Phi& phi, const Csc& word_sent);

// E-step over all sentences with author profiles `theta` (floor plus increments,
// summing to 1 over the n_terms terms).
Resp e_step(const Corpus& c, const Phi& phi, const std::vector<Profile>& theta,
            const Control& ctl, const Runner& run);

// Exact author-credit M-step for theta with the prior count author_pc[a] of
// profile a; returns the new profiles.
std::vector<Profile> m_step_theta(const Corpus& c, const Resp& resp,
                                  const std::vector<Profile>& theta,
                                  const Csc& author_docs, const std::vector<double>& author_pc,
                                  const Runner& run);

// log prior of theta under symmetric Dirichlets with alpha - 1 = author_pc[a];
// with `normalised` the Dirichlet log normalising constants are included.
double theta_log_prior(const std::vector<Profile>& theta, int n_terms,
                       const std::vector<double>& author_pc, bool normalised);

// Held-out choice of the profiles' prior counts (see go_annotator.cpp).
struct HeldOut {
  std::vector<double> c;      // chosen prior count per profile
  std::vector<double> value;  // H_a(c_a) per profile, without the constant sum_s log S0_s
  // detail (Control::keep_heldout): the (profile, sentence) pairs, profile-major,
  // profile a's pairs in [ptr[a], ptr[a + 1]) in sentence order
  std::vector<std::size_t> ptr;
  std::vector<std::size_t> sent;
  std::vector<int> fold;
  std::vector<double> rho;      // S1_s / S0_s
  std::vector<double> n_other;  // total credit of the other fold
  std::vector<double> ls0;      // log S0_s
};

// Fold (0 or 1) of sentence s.
int heldout_fold(std::uint64_t seed, std::size_t s);

// H(c) = sum_i log(rho_i + c) - log(n_other_i + K c) over the pairs [i0, i1).
double heldout_value(const HeldOut& h, std::size_t i0, std::size_t i1, double K, double c);

// Choose every profile's prior count from the E-step `resp` (which must carry
// ls0 / lflat) computed with the profiles `theta`.
HeldOut choose_author_pc(const Corpus& c, const Resp& resp, const std::vector<Profile>& theta,
                         const Csc& author_docs, const Control& ctl, const Runner& run);

// Transpose of a Csc matrix with nrow rows (counts kept).
Csc transpose(const Csc& m, int nrow);

// Corpus-wide term distribution: mean responsibility over sentences.
std::vector<double> term_distribution(const Resp& resp, int n_terms);

struct Fit {
  std::vector<Profile> theta;
  Phi phi;
  Resp resp;
  std::vector<int> baseline;  // argmax under definitions only and uniform profiles
  std::vector<double> objective;
  std::vector<double> n_changed;
  std::vector<double> seconds;  // wall time of each iteration (M-step before it + E-step)
  std::vector<double> n_full;   // per E-step: sentences scored against every term
  // objective_prev[t] (t >= 1): the objective of iteration t's parameters under
  // the prior counts used by the M-step after it (which gave iteration t + 1's);
  // equal to objective[t] with a fixed prior count
  std::vector<double> objective_prev;
  std::vector<double> author_pc;  // prior count of each profile in the last M-step
  HeldOut heldout;                // the last held-out selection (auto_author_pc)
  bool converged = false;
  int iterations = 0;
};

// Whole EM. `tick(iter)` is called on the calling thread between iterations
// (e.g. for interrupt checks); it must not be called from workers.
Fit fit_em(const Corpus& c, int n_profiles, const Control& ctl, const Runner& run,
           const std::function<void(int)>& tick);

}  // namespace go
}  // namespace augp

#endif
