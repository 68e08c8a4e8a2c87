// EM for the document -> author -> GO term -> sentence model. No R API here.
//
// Background mixture (Control::background > 0). A word of a sentence with term G
// is drawn from p_G(w) = (1 - l) phi_G(w) + l beta(w). Priors: phi_G ~
// Dirichlet(O_G + 1) (O = definition counts), beta ~ Dirichlet(D + pc + 1) with
// D_w = sum_G O_Gw (the definitions' words are prior background counts), l flat.
// Complete data: the term of each sentence and the source z (term or
// background) of each word occurrence. E-step: r_sG as without the background,
// with p_G in place of phi_G; given G, an occurrence of w came from the term with
// probability f_Gw = (1 - l) phi_G(w) / p_G(w). M-step (maximising the expected
// complete log posterior):
//   C_Gw = O_Gw + sum_s r_sG n_sw f_Gw,   phi_G(w) = C_Gw / Z_G, Z_G = sum_w C_Gw,
//   B_w = sum_s n_sw - sum_G sum_s r_sG n_sw f_Gw,
//   l = sum_w B_w / sum_w n_w,  beta(w) = (B_w + D_w + pc) / (sum_w (B_w + D_w) + V pc).
// (A term with Z_G = 0 has a flat posterior in phi_G; it takes the uniform 1/V.)
// Sparse scores: log p_G(w) = log(l beta(w)) + log1p((1 - l) phi_G(w) / (l beta(w))),
// the first part is shared by all terms (added once to the log likelihood as
// sum_w n_w log(l beta(w))) and the second is zero when C_Gw = 0, so a sentence
// only touches the terms that have one of its words. The objective is
// sum_s log sum_G P(G|d) prod_w p_G(w)^n_sw + sum O_Gw log phi_G(w)
// + sum_w (D_w + pc) log beta(w) (+ the theta prior), non-decreasing under soft EM.
//
// Held-out prior counts of the profiles (Control::auto_author_pc). With the prior
// count c, author a's profile is theta_G(c) = (n_G + c) / (N + K c), n_G the
// author's credits (sum over its sentences s of r_sG theta_aG / sum_{b in d}
// theta_bG), N = sum_G n_G. Each sentence has a fold (a seeded hash of its index,
// 0 or 1). For a sentence s of fold f in a document of a, the profile built from
// the other fold's credits n^-_G (total N^-) predicts its words by
//   p(w_s) = sum_G theta_G(c) L_sG = (S1_s + c S0_s) / (N^- + K c),
//   S1_s = sum_G n^-_G L_sG,  S0_s = sum_G L_sG  (all K terms),
// with L_sG = P(s | G) the E-step's word likelihood. The author's held-out log
// likelihood is therefore, with rho_s = S1_s / S0_s,
//   H_a(c) = sum_s log S0_s + sum_s [log(rho_s + c) - log(N^-_s + K c)],
// whose first sum does not depend on c. Only S0_s and the stored
// responsibilities are needed: for a stored entry, L_sG / S0_s =
// r_sG k_s p_s / (P(G | d) S0_s) with p_s = sum_G P(G | d) L_sG the E-step's
// normaliser and k_s the posterior mass kept in the row, so rho_s = sum over the
// stored entries of n^-_G r_sG exp(lflat_s) / P(G | d), lflat_s = log(k_s p_s /
// S0_s). The E-step computes S0_s in the same pass as p_s: relative to
// exp(m_s - log F_d) (m_s the largest score, F_d the floor, so every term's
// scaled value exp(W_sG + log F_d - m_s) <= 1 and the largest is >= F_d), the
// candidates contribute exp(score - log prior + log F_d - m_s) and the other
// terms the closed-form total of their word parts; the background constant
// shared by all terms cancels in rho_s and is left out of S0_s. Terms dropped by
// truncation are left out of S1_s (exact with truncate = 0). For a sentence of
// a document with several authors the author's own profile is the predictor.
// H_a is maximised over u = log c in [log lo, log hi] (a grid of quarter decades,
// ties to the larger c, then golden sections between the best point's
// neighbours); the top of the interval is a practically flat profile. An
// author whose other fold has no credit gets H_a constant and the top.
// The counts are chosen from the first E-step (definitions only, uniform
// profiles: no sentence has yet been counted into the word distributions or the
// credits it is scored against) and then held fixed, or, with
// Control::reselect_author_pc, from every E-step before the M-step that uses
// them. The objective's theta prior then includes the Dirichlet normalising
// constants, log Gamma(K (c + 1)) - K log Gamma(c + 1) per profile, so that it
// is a log density for every c. Chosen once, the counts are fixed for every
// M-step and the first iteration's objective is recomputed with them (the
// uniform profiles of the first E-step have no counts of their own), so the
// objective trace is J(.; c) for one c and non-decreasing as for fixed counts.
// In general, given the counts c^t used by the M-step after
// E-step t, that M-step is an exact EM step for the objective J(.; c^t), so
// J(params^{t+1}; c^t) >= J(params^t; c^t) under soft EM without truncation:
// Fit::objective_prev holds J(params^t; c^t) and
// Fit::objective J(params^{t+1}; c^t), and the convergence test compares these two.
#include "go_annotator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

#include "numerics.h"
#include "rng.h"

namespace augp {
namespace go {

namespace {

constexpr std::size_t SENT_BLOCK = 256;  // target sentences per E-step block
constexpr std::size_t WORD_BLOCK = 512;  // words per phi block
constexpr std::size_t DOC_BLOCK = 128;   // documents per theta block
constexpr std::size_t AUTH_BLOCK = 64;   // profiles per theta block
constexpr std::size_t SKIP_NMAX = 4;     // largest count of a skipped word (see e_step)
constexpr std::size_t SKIP_WORDS = 256;  // most words that can be skipped (tables of K entries)
const double NEG_INF = -std::numeric_limits<double>::infinity();

// Fixed partition of [0, n) into blocks of size b (independent of threads).
std::vector<std::size_t> even_blocks(std::size_t n, std::size_t b) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < n; i += b) cuts.push_back(i);
  cuts.push_back(n);
  return cuts;
}

// Pseudo-random but reproducible rank used to break exact ties.
inline std::uint64_t tie_rank(std::uint64_t seed, std::size_t s, int g) {
  std::uint64_t x = seed ^ (0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(s) + 1));
  x += 0xD1B54A32D192ED03ULL * (static_cast<std::uint64_t>(g) + 1);
  return splitmix64(x);
}

// theta_aG = floor + increment of term g.
double value_of(const Profile& pr, int g) {
  const SparseVec& v = pr.inc;
  auto it = std::lower_bound(v.begin(), v.end(), g,
                             [](const Entry& e, int key) { return e.g < key; });
  return pr.floor + ((it != v.end() && it->g == g) ? it->v : 0.0);
}

}  // namespace

Csc transpose(const Csc& m, int nrow) {
  Csc t;
  t.p.assign(static_cast<std::size_t>(nrow) + 1, 0);
  for (int i : m.idx) ++t.p[static_cast<std::size_t>(i) + 1];
  for (std::size_t r = 0; r < static_cast<std::size_t>(nrow); ++r) t.p[r + 1] += t.p[r];
  t.idx.resize(m.idx.size());
  t.val.resize(m.val.size());
  std::vector<std::size_t> next(t.p.begin(), t.p.end() - 1);
  for (std::size_t j = 0; j < m.ncol(); ++j) {
    for (std::size_t k = m.p[j]; k < m.p[j + 1]; ++k) {
      const std::size_t pos = next[static_cast<std::size_t>(m.idx[k])]++;
      t.idx[pos] = static_cast<int>(j);
      t.val[pos] = m.val[k];
    }
  }
  return t;
}

Phi build_phi(const Corpus& c, const Resp* resp, const Csc& word_sent, double pc,
              const Runner& run) {
  const std::size_t V = static_cast<std::size_t>(c.n_words);
  const std::size_t K = static_cast<std::size_t>(c.n_terms);
  const std::vector<std::size_t> cuts = even_blocks(V, WORD_BLOCK);
  const std::size_t nb = cuts.size() - 1;
  // per block: entries of its words, in word order
  std::vector<std::vector<std::size_t>> bcount(nb);
  std::vector<std::vector<int>> bg(nb);
  std::vector<std::vector<double>> bc(nb), bo(nb);

  run(nb, [&](std::size_t b0, std::size_t b1) {
    std::vector<double> acc(K, 0.0), def(K, 0.0);
    std::vector<char> seen(K, 0);
    std::vector<int> touched;
    for (std::size_t b = b0; b < b1; ++b) {
      for (std::size_t w = cuts[b]; w < cuts[b + 1]; ++w) {
        touched.clear();
        if (resp != nullptr && w < word_sent.ncol()) {
          for (std::size_t k = word_sent.p[w]; k < word_sent.p[w + 1]; ++k) {
            const std::size_t s = static_cast<std::size_t>(word_sent.idx[k]);
            const double n = word_sent.val[k];
            for (std::size_t e = resp->p[s]; e < resp->p[s + 1]; ++e) {
              const int g = resp->g[e];
              if (!seen[g]) {
                seen[g] = 1;
                touched.push_back(g);
              }
              acc[g] += n * resp->r[e];
            }
          }
        }
        for (std::size_t k = c.definitions.p[w]; k < c.definitions.p[w + 1]; ++k) {
          const int g = c.definitions.idx[k];
          if (!seen[g]) {
            seen[g] = 1;
            touched.push_back(g);
          }
          def[g] += c.definitions.val[k];
        }
        std::sort(touched.begin(), touched.end());
        std::size_t kept = 0;
        for (int g : touched) {
          const double total = acc[g] + def[g];
          if (total > 0.0) {
            bg[b].push_back(g);
            bc[b].push_back(total);
            bo[b].push_back(def[g]);
            ++kept;
          }
          acc[g] = 0.0;
          def[g] = 0.0;
          seen[g] = 0;
        }
        bcount[b].push_back(kept);
      }
    }
  });

  Phi phi;
  phi.wp.assign(V + 1, 0);
  std::size_t w = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    for (std::size_t k : bcount[b]) {
      phi.wp[w + 1] = phi.wp[w] + k;
      ++w;
    }
  }
  const std::size_t nnz = phi.wp[V];
  phi.g.reserve(nnz);
  phi.count.reserve(nnz);
  phi.defn.reserve(nnz);
  for (std::size_t b = 0; b < nb; ++b) {
    phi.g.insert(phi.g.end(), bg[b].begin(), bg[b].end());
    phi.count.insert(phi.count.end(), bc[b].begin(), bc[b].end());
    phi.defn.insert(phi.defn.end(), bo[b].begin(), bo[b].end());
  }
  // totals in word order (deterministic)
  std::vector<double> Z(K, static_cast<double>(V) * pc), O(K, 0.0);
  phi.l1p.resize(nnz);
  for (std::size_t e = 0; e < nnz; ++e) {
    Z[phi.g[e]] += phi.count[e];
    O[phi.g[e]] += phi.defn[e];
    phi.l1p[e] = std::log1p(phi.count[e] / pc);
  }
  phi.logpz.resize(K);
  double lp = 0.0;
  for (std::size_t g = 0; g < K; ++g) {
    phi.logpz[g] = std::log(pc / Z[g]);
    lp += (O[g] + static_cast<double>(V) * pc) * phi.logpz[g];
  }
  for (std::size_t e = 0; e < nnz; ++e) lp += (phi.defn[e] + pc) * phi.l1p[e];
  phi.log_prior = lp;
  return phi;
}

Phi build_phi_bg(const Corpus& c, const Resp* resp, const Phi* old, const Csc& word_sent,
                 double pc, double lambda0, const Runner& run) {
  const std::size_t V = static_cast<std::size_t>(c.n_words);
  const std::size_t K = static_cast<std::size_t>(c.n_terms);
  const bool mstep = resp != nullptr && old != nullptr;
  const std::vector<std::size_t> cuts = even_blocks(V, WORD_BLOCK);
  const std::size_t nb = cuts.size() - 1;
  std::vector<std::vector<std::size_t>> bcount(nb);
  std::vector<std::vector<int>> bg(nb);
  std::vector<std::vector<double>> bc(nb), bo(nb);
  std::vector<double> nw(V, 0.0), bw(V, 0.0);  // corpus count and background count of w

  run(nb, [&](std::size_t b0, std::size_t b1) {
    std::vector<double> acc(K, 0.0), def(K, 0.0), frac(K, 0.0);
    std::vector<char> seen(K, 0);
    std::vector<int> touched;
    for (std::size_t b = b0; b < b1; ++b) {
      for (std::size_t w = cuts[b]; w < cuts[b + 1]; ++w) {
        touched.clear();
        double n_w = 0.0, term_w = 0.0;
        if (w < word_sent.ncol()) {
          for (std::size_t k = word_sent.p[w]; k < word_sent.p[w + 1]; ++k) n_w += word_sent.val[k];
        }
        if (mstep && w < word_sent.ncol()) {
          // share of an occurrence of w under term G that the term (not the
          // background) generated: (1 - lambda) phi_Gw / ((1 - lambda) phi_Gw + lambda beta_w)
          const double lb = old->lambda * old->beta[w];
          for (std::size_t e = old->wp[w]; e < old->wp[w + 1]; ++e) {
            const int g = old->g[e];
            const double t = (1.0 - old->lambda) * old->count[e] / old->zsum[g];
            frac[g] = t / (t + lb);
          }
          // a term with the uniform distribution: phi_Gw = 1 / V
          const double tu = (1.0 - old->lambda) / static_cast<double>(V);
          const double fu = tu / (tu + lb);
          for (std::size_t k = word_sent.p[w]; k < word_sent.p[w + 1]; ++k) {
            const std::size_t s = static_cast<std::size_t>(word_sent.idx[k]);
            const double n = word_sent.val[k];
            for (std::size_t e = resp->p[s]; e < resp->p[s + 1]; ++e) {
              const int g = resp->g[e];
              const double add = n * resp->r[e] * (old->uniform[g] ? fu : frac[g]);
              if (add <= 0.0) continue;
              if (!seen[g]) {
                seen[g] = 1;
                touched.push_back(g);
              }
              acc[g] += add;
            }
          }
          for (std::size_t e = old->wp[w]; e < old->wp[w + 1]; ++e) frac[old->g[e]] = 0.0;
        }
        for (std::size_t k = c.definitions.p[w]; k < c.definitions.p[w + 1]; ++k) {
          const int g = c.definitions.idx[k];
          if (!seen[g]) {
            seen[g] = 1;
            touched.push_back(g);
          }
          def[g] += c.definitions.val[k];
        }
        std::sort(touched.begin(), touched.end());
        std::size_t kept = 0;
        for (int g : touched) {
          const double total = acc[g] + def[g];
          term_w += acc[g];
          if (total > 0.0) {
            bg[b].push_back(g);
            bc[b].push_back(total);
            bo[b].push_back(def[g]);
            ++kept;
          }
          acc[g] = 0.0;
          def[g] = 0.0;
          seen[g] = 0;
        }
        bcount[b].push_back(kept);
        nw[w] = n_w;
        bw[w] = std::max(0.0, n_w - term_w);
      }
    }
  });

  Phi phi;
  std::vector<std::size_t> wp(V + 1, 0);
  std::size_t w = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    for (std::size_t k : bcount[b]) {
      wp[w + 1] = wp[w] + k;
      ++w;
    }
  }
  std::vector<int> eg;
  std::vector<double> ec, eo;
  for (std::size_t b = 0; b < nb; ++b) {
    eg.insert(eg.end(), bg[b].begin(), bg[b].end());
    ec.insert(ec.end(), bc[b].begin(), bc[b].end());
    eo.insert(eo.end(), bo[b].begin(), bo[b].end());
  }
  phi.zsum.assign(K, 0.0);
  for (std::size_t e = 0; e < eg.size(); ++e) phi.zsum[eg[e]] += ec[e];
  // background weight and distribution
  double n_tot = 0.0, b_tot = 0.0;
  for (std::size_t v = 0; v < V; ++v) {
    n_tot += nw[v];
    b_tot += bw[v];
  }
  // prior counts of beta: pseudocount plus the definitions' word counts D_w
  std::vector<double> dw(V, 0.0);
  double d_tot = 0.0;
  for (std::size_t v = 0; v < V; ++v) {
    for (std::size_t k = c.definitions.p[v]; k < c.definitions.p[v + 1]; ++k) {
      dw[v] += c.definitions.val[k];
    }
    d_tot += dw[v];
  }
  phi.beta.assign(V, 0.0);
  if (mstep) {
    phi.lambda = n_tot > 0.0 ? b_tot / n_tot : old->lambda;
    for (std::size_t v = 0; v < V; ++v) {
      phi.beta[v] = (bw[v] + dw[v] + pc) / (b_tot + d_tot + static_cast<double>(V) * pc);
    }
  } else {
    // start: beta from all words of the definitions and the corpus
    phi.lambda = lambda0;
    for (std::size_t v = 0; v < V; ++v) {
      phi.beta[v] = (nw[v] + dw[v] + pc) / (n_tot + d_tot + static_cast<double>(V) * pc);
    }
  }
  if (!(phi.lambda > 0.0)) phi.lambda = 1e-12;  // keep the floor lambda beta_w positive
  if (phi.lambda > 1.0 - 1e-12) phi.lambda = 1.0 - 1e-12;
  // terms with Z_G = 0 use the uniform distribution 1 / V: they are flagged and
  // share the per-word value lu_w instead of having an entry for every word
  phi.uniform.assign(K, 0);
  phi.n_uniform = 0;
  for (std::size_t g = 0; g < K; ++g) {
    if (!(phi.zsum[g] > 0.0)) {
      phi.uniform[g] = 1;
      ++phi.n_uniform;
    }
  }
  const double lam = phi.lambda;
  phi.lu.assign(V, 0.0);
  for (std::size_t v = 0; v < V; ++v) {
    phi.lu[v] = std::log1p((1.0 - lam) / (static_cast<double>(V) * lam * phi.beta[v]));
  }
  phi.wp = std::move(wp);
  phi.g = std::move(eg);
  phi.count = std::move(ec);
  phi.defn = std::move(eo);
  phi.l1p.resize(phi.g.size());
  for (std::size_t v = 0; v < V; ++v) {
    const double lb = lam * phi.beta[v];
    for (std::size_t e = phi.wp[v]; e < phi.wp[v + 1]; ++e) {
      phi.l1p[e] = std::log1p((1.0 - lam) * phi.count[e] / (phi.zsum[phi.g[e]] * lb));
    }
  }
  phi.logpz.assign(K, 0.0);
  // log prior: Dirichlet(O_G + 1) on phi_G, Dirichlet(D + pc + 1) on beta
  double lp = 0.0;
  for (std::size_t e = 0; e < phi.g.size(); ++e) {
    if (phi.defn[e] > 0.0) lp += phi.defn[e] * std::log(phi.count[e] / phi.zsum[phi.g[e]]);
  }
  for (std::size_t v = 0; v < V; ++v) lp += (dw[v] + pc) * std::log(phi.beta[v]);
  phi.log_prior = lp;
  return phi;
}

double background_constant(const Phi& phi, const Csc& word_sent) {
  double out = 0.0;
  for (std::size_t w = 0; w < word_sent.ncol(); ++w) {
    double n = 0.0;
    for (std::size_t k = word_sent.p[w]; k < word_sent.p[w + 1]; ++k) n += word_sent.val[k];
    if (n > 0.0) out += n * std::log(phi.lambda * phi.beta[w]);
  }
  return out;
}

// E-step. P(G | d) = mean over the document's profiles = F_d + I_dG with
// F_d the mean floor and I_dG the mean increment (sparse, on the union U_d of
// the profiles' increments). The word part of a score, L_sG = len_s logpz_G +
// sum_w n_sw l1p_Gw, equals len_s logpz_G for every term that shares no word
// with the sentence (l1p has entries only for the terms having w; T_s denotes
// the terms sharing a word). So the candidates C_s = U_d + T_s (only U_d when
// F_d = 0) are scored one by one, and every other term G has the score
// log F_d + len_s logpz_G: their largest score is at most log F_d + M(len_s),
// M(len) = max_G len logpz_G, and their total is
// F_d (E(len_s) - sum_{G in C_s} exp(len_s logpz_G)), E(len) = sum_G exp(len logpz_G),
// both cached per sentence length (with the background logpz = 0: M = 0, E = K,
// and the total is F_d (K - |C_s|) exactly). With the background, a term with
// the uniform word distribution has no word entries and the word part
// U_s = sum_w n_sw lu_w instead of len_s logpz_G; such a term is a candidate
// when it is in U_d, and the others of them add F_d exp(U_s) each.
// Two more closed forms with the background (flat logpz), so that common words
// and wide profiles do not make every term a candidate:
// * Small support terms (F_d + I_dG < truncate): one that shares no word with
//   the sentence has the score log(F_d + I_dG); their total is the document's
//   sum of these priors minus those of the small terms that are candidates
//   (the ones sharing a word), their largest score the largest such prior.
// * The sentence word w* with the longest posting (at least ctl.skip_min
//   terms, count n* <= SKIP_NMAX) is not traversed: a term having w* and no
//   other sentence word is not a candidate; it has the score
//   log F_d + n* l1p_Gw*, and these terms add
//   F_d (S1(w*, n*) - sum over the candidates having w* of expm1(n* l1p_Gw*))
//   with S1(w, n) = sum over the terms having w of expm1(n l1p_Gw) (cached);
//   their largest score is at most log F_d + n* max_G l1p_Gw*. The candidates'
//   values of w* come from a table of w*'s posting by term (for at most
//   SKIP_WORDS words, those with the longest postings).
// These sums are exact up to floating-point rounding (differences of sums of
// positive numbers, each bounded by the normaliser), and the same checks decide
// whether the non-candidates may be left out of the stored row. The subtraction loses at most
// eps F_d E(len_s), which is below eps times the normaliser because every
// term's score is at least its floor score (l1p >= 0). The log marginal
// likelihood of the sentence is therefore exact, and so is the posterior of
// every candidate. The other terms are left out of the stored row only when
// that is what the full computation would do: none of them can be the best
// term (bound below the best candidate's score minus the tie tolerance) and,
// for soft EM, each is below `truncate`. Otherwise the sentence is scored
// against all K terms. Stored rows: the posterior r_sG >= truncate (every
// positive r_sG with truncate = 0), always the best term, renormalised.
Resp e_step(const Corpus& c, const Phi& phi, const std::vector<Profile>& theta,
            const Control& ctl, const Runner& run) {
  const std::size_t K = static_cast<std::size_t>(c.n_terms);
  const std::size_t D = c.doc_ptr.size() - 1;
  const std::size_t S = c.sentences.ncol();
  // blocks of whole documents with about SENT_BLOCK sentences each
  std::vector<std::size_t> dcuts{0};
  for (std::size_t d = 0; d < D; ++d) {
    if (c.doc_ptr[d + 1] - c.doc_ptr[dcuts.back()] >= SENT_BLOCK) dcuts.push_back(d + 1);
  }
  if (dcuts.back() != D) dcuts.push_back(D);
  const std::size_t nb = dcuts.size() - 1;
  std::vector<std::vector<std::size_t>> bn(nb);
  std::vector<std::vector<int>> bg(nb);
  std::vector<std::vector<double>> br(nb);
  std::vector<double> bll(nb, 0.0), bfull(nb, 0.0);
  Resp out;
  out.top.assign(S, -1);
  out.top_r.assign(S, 0.0);
  // per-sentence sums over all terms for the held-out choice of the prior counts
  const bool want_flat = ctl.auto_author_pc && !ctl.hard;
  if (want_flat) {
    out.ls0.assign(S, std::numeric_limits<double>::quiet_NaN());
    out.lflat.assign(S, std::numeric_limits<double>::quiet_NaN());
  }

  // M(len) and log E(len) for every sentence length (only needed with a floor)
  bool any_floor = false;
  for (const Profile& pr : theta) any_floor = any_floor || pr.floor > 0.0;
  bool flat_pz = true;
  for (double z : phi.logpz) flat_pz = flat_pz && z == 0.0;
  // terms with the uniform word distribution (background model only, so flat_pz)
  const bool has_u = phi.n_uniform > 0;
  auto is_u = [&](int g) { return has_u && phi.uniform[static_cast<std::size_t>(g)] != 0; };
  std::vector<double> lens, len_max, len_lse;
  if (any_floor) {
    for (std::size_t s = 0; s < S; ++s) {
      double len = 0.0;
      for (std::size_t k = c.sentences.p[s]; k < c.sentences.p[s + 1]; ++k) len += c.sentences.val[k];
      lens.push_back(len);
    }
    std::sort(lens.begin(), lens.end());
    lens.erase(std::unique(lens.begin(), lens.end()), lens.end());
    for (double len : lens) {
      if (flat_pz) {
        len_max.push_back(0.0);
        len_lse.push_back(std::log(static_cast<double>(K)));
        continue;
      }
      double mx = NEG_INF;
      for (std::size_t g = 0; g < K; ++g) mx = std::max(mx, len * phi.logpz[g]);
      double sm = 0.0;
      for (std::size_t g = 0; g < K; ++g) sm += std::exp(len * phi.logpz[g] - mx);
      len_max.push_back(mx);
      len_lse.push_back(mx + std::log(sm));
    }
  }

  // Long postings (background model only): for a word w with at least
  // ctl.skip_min entries, S1[w][n - 1] = sum over its terms of expm1(n l1p_Gw),
  // n = 1..SKIP_NMAX, and lmax[w] = max_G l1p_Gw.
  const std::size_t V = phi.wp.size() - 1;
  const bool skip_ok = flat_pz && any_floor && ctl.skip_min > 0 &&
                       phi.g.size() < static_cast<std::size_t>(INT32_MAX);
  // em1[e * SKIP_NMAX + n - 1] = expm1(n l1p_e) for the entries of these words.
  // At most SKIP_WORDS such words (the longest postings); each has a table
  // ltab[id * K + G] = its posting entry of term G (-1: none).
  std::vector<double> S1, lmax, em1;
  std::vector<int> long_id;
  std::vector<std::int32_t> ltab;
  if (skip_ok) {
    std::vector<std::pair<std::size_t, std::size_t>> cand;  // (-length, word)
    for (std::size_t w = 0; w < V; ++w) {
      const std::size_t pl = phi.wp[w + 1] - phi.wp[w];
      if (pl >= static_cast<std::size_t>(ctl.skip_min)) cand.push_back({pl, w});
    }
    std::sort(cand.begin(), cand.end(), [](const std::pair<std::size_t, std::size_t>& x,
                                           const std::pair<std::size_t, std::size_t>& y) {
      return x.first > y.first || (x.first == y.first && x.second < y.second);
    });
    if (cand.size() > SKIP_WORDS) cand.resize(SKIP_WORDS);
    long_id.assign(V, -1);
    ltab.assign(cand.size() * K, -1);
    S1.assign(V * SKIP_NMAX, 0.0);
    lmax.assign(V, 0.0);
    em1.assign(phi.g.size() * SKIP_NMAX, 0.0);
    for (std::size_t i = 0; i < cand.size(); ++i) {
      const std::size_t w = cand[i].second;
      long_id[w] = static_cast<int>(i);
      for (std::size_t e = phi.wp[w]; e < phi.wp[w + 1]; ++e) {
        ltab[i * K + static_cast<std::size_t>(phi.g[e])] = static_cast<std::int32_t>(e);
        lmax[w] = std::max(lmax[w], phi.l1p[e]);
        for (std::size_t n = 1; n <= SKIP_NMAX; ++n) {
          const double x = std::expm1(static_cast<double>(n) * phi.l1p[e]);
          em1[e * SKIP_NMAX + n - 1] = x;
          S1[w * SKIP_NMAX + n - 1] += x;
        }
      }
    }
  }

  run(nb, [&](std::size_t b0, std::size_t b1) {
    // per-thread scratch: pos = index in the document's support, accd / seen =
    // word score of a term touched by the sentence; candidates at most K
    std::vector<int> pos(K, -1), cg(K), support, touched, order, all_terms;
    std::vector<char> seen(K, 0), small;
    // cp: log prior of each candidate (its score minus cp is the word part)
    std::vector<double> accd(K, 0.0), cs(K), cp(K), ex(K), pinc, lpd, ldense, dense_sc,
        dense_ex;
    touched.reserve(K);
    for (std::size_t b = b0; b < b1; ++b) {
      double ll = 0.0;
      for (std::size_t d = dcuts[b]; d < dcuts[b + 1]; ++d) {
        const std::size_t a0 = c.doc_authors.p[d], a1 = c.doc_authors.p[d + 1];
        const double na = static_cast<double>(a1 - a0);
        // P(G | d) = F + I_G on the support U_d, F elsewhere
        double F = 0.0;
        support.clear();
        pinc.clear();
        for (std::size_t k = a0; k < a1; ++k) {
          const Profile& pr = theta[static_cast<std::size_t>(c.doc_authors.idx[k])];
          F += pr.floor;
          for (const Entry& e : pr.inc) {
            if (pos[e.g] < 0) {
              pos[e.g] = static_cast<int>(support.size());
              support.push_back(e.g);
              pinc.push_back(0.0);
            }
            pinc[pos[e.g]] += e.v;
          }
        }
        F /= na;
        const double logF = F > 0.0 ? std::log(F) : NEG_INF;
        const std::size_t ns = support.size();
        std::size_t nu_support = 0;
        for (int g : support) nu_support += is_u(g) ? 1 : 0;
        lpd.resize(ns);
        for (std::size_t k = 0; k < ns; ++k) lpd[k] = std::log(F + pinc[k] / na);
        bool dense_built = false;
        // small support terms (background model, truncate > 0): prior below
        // truncate, not uniform; when a sentence shares no word with one, its
        // score is its log prior and it is summed in closed form (sp_small)
        const bool split = flat_pz && F > 0.0 && ctl.truncate > 0.0;
        small.assign(ns, 0);
        double sp_small = 0.0, lmax_small = NEG_INF;
        std::size_t n_small = 0;
        if (split) {
          for (std::size_t k = 0; k < ns; ++k) {
            const double pv = F + pinc[k] / na;
            if (!is_u(support[k]) && pv < ctl.truncate) {
              small[k] = 1;
              sp_small += pv;
              lmax_small = std::max(lmax_small, lpd[k]);
              ++n_small;
            }
          }
        }

        for (std::size_t s = c.doc_ptr[d]; s < c.doc_ptr[d + 1]; ++s) {
          const std::size_t w0 = c.sentences.p[s], w1 = c.sentences.p[s + 1];
          double len = 0.0;
          double U = 0.0;  // word part of the score of a term with the uniform distribution
          for (std::size_t k = w0; k < w1; ++k) len += c.sentences.val[k];
          if (has_u) {
            for (std::size_t k = w0; k < w1; ++k) {
              U += c.sentences.val[k] * phi.lu[static_cast<std::size_t>(c.sentences.idx[k])];
            }
          }
          // candidates (term, score) in cg / cs, nc of them
          std::size_t nc = 0;
          double sub_skip = 0.0;  // sum of expm1(n l1p) over the skipped word's candidates
          double sp_touched = 0.0;  // prior of the small support terms that are candidates
          std::size_t n_small_touched = 0;
          touched.clear();
          // the word with the longest posting, if long enough to be skipped
          std::size_t wskip = V;
          double nskip = 0.0;
          if (skip_ok && F > 0.0) {
            std::size_t longest = 0;
            for (std::size_t k = w0; k < w1; ++k) {
              const std::size_t w = static_cast<std::size_t>(c.sentences.idx[k]);
              if (long_id[w] < 0) continue;
              const std::size_t pl = phi.wp[w + 1] - phi.wp[w];
              if (pl > longest) {
                longest = pl;
                wskip = w;
                nskip = c.sentences.val[k];
              }
            }
            if (longest == 0 || nskip > SKIP_NMAX || nskip != std::floor(nskip) || nskip < 1.0) {
              wskip = V;
            }
          }
          if (F > 0.0) {
            // word scores of every term sharing a word with the sentence (but the
            // skipped word: its terms that share no other word are not candidates)
            for (std::size_t k = w0; k < w1; ++k) {
              const std::size_t w = static_cast<std::size_t>(c.sentences.idx[k]);
              const double n = c.sentences.val[k];
              if (w == wskip) continue;
              for (std::size_t e = phi.wp[w]; e < phi.wp[w + 1]; ++e) {
                const int g = phi.g[e];
                if (!seen[g]) {
                  seen[g] = 1;
                  touched.push_back(g);
                }
                accd[g] += n * phi.l1p[e];
              }
            }
            if (wskip < V) {
              // the skipped word's part, for the candidates
              const std::int32_t* lw = ltab.data() + static_cast<std::size_t>(long_id[wskip]) * K;
              for (int g : support) {
                if (!seen[g] && lw[g] >= 0) {
                  seen[g] = 1;
                  touched.push_back(g);
                }
              }
              const std::size_t ni = static_cast<std::size_t>(nskip) - 1;
              for (int g : touched) {
                const std::int32_t e = lw[g];
                if (e >= 0) {
                  accd[g] += nskip * phi.l1p[static_cast<std::size_t>(e)];
                  sub_skip += em1[static_cast<std::size_t>(e) * SKIP_NMAX + ni];
                }
              }
            }
            for (std::size_t k = 0; k < ns; ++k) {
              if (small[k]) continue;
              const int g = support[k];
              cg[nc] = g;
              cp[nc] = lpd[k];
              cs[nc++] = lpd[k] + len * phi.logpz[g] + (is_u(g) ? U : accd[g]);
            }
            for (int g : touched) {
              const int q = pos[g];
              if (q < 0) {
                cg[nc] = g;
                cp[nc] = logF;
                cs[nc++] = logF + len * phi.logpz[g] + accd[g];
              } else if (small[static_cast<std::size_t>(q)]) {
                cg[nc] = g;
                cp[nc] = lpd[static_cast<std::size_t>(q)];
                cs[nc++] = lpd[static_cast<std::size_t>(q)] + len * phi.logpz[g] + accd[g];
                sp_touched += std::exp(lpd[static_cast<std::size_t>(q)]);
                ++n_small_touched;
              }
            }
          } else {
            // no floor: only the support has prior mass
            for (std::size_t k = 0; k < ns; ++k) {
              cg[nc] = support[k];
              cp[nc] = lpd[k];
              cs[nc++] = lpd[k] + len * phi.logpz[support[k]] + (is_u(support[k]) ? U : 0.0);
            }
            for (std::size_t k = w0; k < w1; ++k) {
              const std::size_t w = static_cast<std::size_t>(c.sentences.idx[k]);
              const double n = c.sentences.val[k];
              for (std::size_t e = phi.wp[w]; e < phi.wp[w + 1]; ++e) {
                const int q = pos[phi.g[e]];
                if (q >= 0) cs[static_cast<std::size_t>(q)] += n * phi.l1p[e];
              }
            }
          }
          // small support terms sharing no word with the sentence, and the other
          // terms outside the support that are not candidates
          const std::size_t n_small_un = n_small - n_small_touched;
          const double sp_un = std::max(0.0, sp_small - sp_touched);
          const std::size_t n_other = F > 0.0 ? K - nc - n_small_un : 0;
          double mx = NEG_INF;
          for (std::size_t k = 0; k < nc; ++k) mx = std::max(mx, cs[k]);
          double tie_tol = 1e-12 * (1.0 + std::fabs(mx));
          // the other terms: a bound on their best score and their total (relative to m)
          double other_max = NEG_INF, m = mx, sum = 0.0;
          // word parts of the terms that are not candidates: sum of L_sG exp(logF - m)
          double flat_other = 0.0;
          if (n_other > 0 || n_small_un > 0) {
            const std::size_t li = static_cast<std::size_t>(
                std::lower_bound(lens.begin(), lens.end(), len) - lens.begin());
            // uniform-distribution terms among them (only in the support when candidates)
            const std::size_t nu_other = phi.n_uniform - nu_support;
            if (n_other > 0) other_max = logF + len_max[li] + (nu_other > 0 ? U : 0.0);
            if (wskip < V) other_max = std::max(other_max, logF + nskip * lmax[wskip]);
            if (n_small_un > 0) other_max = std::max(other_max, lmax_small);
            m = std::max(mx, other_max);
            double other = 0.0;
            if (flat_pz) {
              // the skipped word's terms that are not candidates add expm1(n l1p) each
              const double extra =
                  wskip < V ? std::max(0.0, S1[wskip * SKIP_NMAX +
                                           static_cast<std::size_t>(nskip) - 1] - sub_skip)
                            : 0.0;
              other = (static_cast<double>(n_other - nu_other) + extra) * std::exp(logF - m) +
                      static_cast<double>(nu_other) * std::exp(logF + U - m) +
                      sp_un * std::exp(-m);
              if (want_flat) {
                flat_other = (static_cast<double>(n_other - nu_other + n_small_un) + extra) *
                                 std::exp(logF - m) +
                             static_cast<double>(nu_other) * std::exp(logF + U - m);
              }
            } else {
              double base = 0.0;
              for (std::size_t k = 0; k < nc; ++k) base += std::exp(logF + len * phi.logpz[cg[k]] - m);
              other = std::max(0.0, std::exp(logF + len_lse[li] - m) - base);
              flat_other = other;
            }
            sum = other;
          }
          for (std::size_t k = 0; k < nc; ++k) {
            ex[k] = std::exp(cs[k] - m);
            sum += ex[k];
          }
          bool full = false;
          if (n_other > 0 || n_small_un > 0) {
            full = nc == 0 || other_max >= mx - tie_tol ||
                   (!ctl.hard && (ctl.truncate <= 0.0 ||
                                  std::exp(other_max - m) / sum >= ctl.truncate));
          }
          const int* terms = cg.data();
          const double* score = cs.data();
          const double* exs = ex.data();
          std::size_t nt = nc;
          if (full) {
            // score every term
            bfull[b] += 1.0;
            if (wskip < V) {
              // the skipped word's terms that were not candidates
              for (std::size_t e = phi.wp[wskip]; e < phi.wp[wskip + 1]; ++e) {
                const int g = phi.g[e];
                if (!seen[g]) {
                  seen[g] = 1;
                  touched.push_back(g);
                  accd[g] += nskip * phi.l1p[e];
                }
              }
            }
            if (!dense_built) {
              ldense.assign(K, logF);
              for (std::size_t k = 0; k < ns; ++k) ldense[support[k]] = lpd[k];
              dense_built = true;
            }
            if (all_terms.size() != K) {
              all_terms.resize(K);
              for (std::size_t g = 0; g < K; ++g) all_terms[g] = static_cast<int>(g);
            }
            dense_sc.resize(K);
            dense_ex.resize(K);
            for (std::size_t g = 0; g < K; ++g) {
              dense_sc[g] = ldense[g] + len * phi.logpz[g] + (is_u(static_cast<int>(g)) ? U : accd[g]);
            }
            mx = NEG_INF;
            for (std::size_t g = 0; g < K; ++g) mx = std::max(mx, dense_sc[g]);
            tie_tol = 1e-12 * (1.0 + std::fabs(mx));
            m = mx;
            sum = 0.0;
            for (std::size_t g = 0; g < K; ++g) {
              dense_ex[g] = std::exp(dense_sc[g] - m);
              sum += dense_ex[g];
            }
            terms = all_terms.data();
            score = dense_sc.data();
            exs = dense_ex.data();
            nt = K;
          }
          for (int g : touched) {
            seen[g] = 0;
            accd[g] = 0.0;
          }
          ll += m + std::log(sum);
          // S0_s relative to exp(m - logF): the candidates' word parts plus the others'
          double lflat0 = std::numeric_limits<double>::quiet_NaN(), ls0 = lflat0;
          if (want_flat && F > 0.0) {
            double x = 0.0;
            if (full) {
              for (std::size_t g = 0; g < K; ++g) x += std::exp(dense_sc[g] - ldense[g] + logF - m);
            } else {
              for (std::size_t k = 0; k < nc; ++k) x += std::exp(cs[k] - cp[k] + logF - m);
              x += flat_other;
            }
            ls0 = m - logF + std::log(x);
            lflat0 = m + std::log(sum) - ls0;
          }
          // deterministic argmax: exact ties broken by a seeded hash of (sentence, term)
          int best = -1;
          std::uint64_t best_rank = 0;
          for (std::size_t k = 0; k < nt; ++k) {
            if (score[k] >= mx - tie_tol) {
              const std::uint64_t rk = tie_rank(ctl.seed, s, terms[k]);
              if (best < 0 || rk < best_rank || (rk == best_rank && terms[k] < best)) {
                best = terms[k];
                best_rank = rk;
              }
            }
          }
          out.top[s] = best;
          std::size_t kept = 0;
          if (ctl.hard) {
            out.top_r[s] = 1.0;
            bg[b].push_back(best);
            br[b].push_back(1.0);
            kept = 1;
          } else {
            // keep r >= truncate (every positive r with truncate = 0) and the best term
            order.clear();
            double ksum = 0.0;
            for (std::size_t k = 0; k < nt; ++k) {
              const double r = exs[k] / sum;
              if (terms[k] == best || (r > 0.0 && r >= ctl.truncate)) {
                order.push_back(static_cast<int>(k));
                ksum += r;
              }
            }
            if (!full) {
              std::sort(order.begin(), order.end(),
                        [&](int x, int y) { return terms[x] < terms[y]; });
            }
            for (int k : order) {
              const double r = exs[k] / sum / ksum;
              bg[b].push_back(terms[k]);
              br[b].push_back(r);
              if (terms[k] == best) out.top_r[s] = r;
            }
            kept = order.size();
            if (want_flat) {
              out.ls0[s] = ls0;
              out.lflat[s] = lflat0 + std::log(ksum);
            }
          }
          bn[b].push_back(kept);
        }
        for (int g : support) pos[g] = -1;
      }
      bll[b] = ll;
    }
  });

  out.p.assign(S + 1, 0);
  std::size_t s = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    for (std::size_t k : bn[b]) {
      out.p[s + 1] = out.p[s] + k;
      ++s;
    }
    out.loglik += bll[b];
    out.n_full += bfull[b];
  }
  out.g.reserve(out.p[S]);
  out.r.reserve(out.p[S]);
  for (std::size_t b = 0; b < nb; ++b) {
    out.g.insert(out.g.end(), bg[b].begin(), bg[b].end());
    out.r.insert(out.r.end(), br[b].begin(), br[b].end());
  }
  return out;
}

std::vector<Profile> m_step_theta(const Corpus& c, const Resp& resp,
                                  const std::vector<Profile>& theta,
                                  const Csc& author_docs, const std::vector<double>& author_pc,
                                  const Runner& run) {
  const std::size_t K = static_cast<std::size_t>(c.n_terms);
  const std::size_t D = c.doc_ptr.size() - 1;
  // (a) per document: R_dG = sum_s r_sG and den_dG = sum_{a in d} theta_aG
  std::vector<SparseVec> Rd(D), den(D);
  const std::vector<std::size_t> dcuts = even_blocks(D, DOC_BLOCK);
  run(dcuts.size() - 1, [&](std::size_t b0, std::size_t b1) {
    std::vector<double> acc(K, 0.0);
    std::vector<char> seen(K, 0);
    std::vector<int> touched;
    for (std::size_t b = b0; b < b1; ++b) {
      for (std::size_t d = dcuts[b]; d < dcuts[b + 1]; ++d) {
        touched.clear();
        for (std::size_t s = c.doc_ptr[d]; s < c.doc_ptr[d + 1]; ++s) {
          for (std::size_t e = resp.p[s]; e < resp.p[s + 1]; ++e) {
            const int g = resp.g[e];
            if (!seen[g]) {
              seen[g] = 1;
              touched.push_back(g);
            }
            acc[g] += resp.r[e];
          }
        }
        std::sort(touched.begin(), touched.end());
        Rd[d].reserve(touched.size());
        den[d].reserve(touched.size());
        for (int g : touched) {
          Rd[d].push_back({g, acc[g]});
          double sden = 0.0;
          for (std::size_t k = c.doc_authors.p[d]; k < c.doc_authors.p[d + 1]; ++k) {
            sden += value_of(theta[static_cast<std::size_t>(c.doc_authors.idx[k])], g);
          }
          den[d].push_back({g, sden});
          acc[g] = 0.0;
          seen[g] = 0;
        }
      }
    }
  });
  // (b) per profile: credit_aG = sum_{d with a} R_dG theta_aG / den_dG; the new
  // profile is (credit_aG + author_pc) / (sum_G credit_aG + K author_pc), i.e.
  // floor author_pc / norm plus the increments credit_aG / norm.
  const std::size_t A = theta.size();
  std::vector<Profile> out(A);
  const std::vector<std::size_t> acuts = even_blocks(A, AUTH_BLOCK);
  run(acuts.size() - 1, [&](std::size_t b0, std::size_t b1) {
    std::vector<double> th(K, 0.0), credit(K, 0.0);  // th: increments of the current profile
    std::vector<char> seen(K, 0);
    std::vector<int> touched;
    for (std::size_t b = b0; b < b1; ++b) {
      for (std::size_t a = acuts[b]; a < acuts[b + 1]; ++a) {
        const double fl = theta[a].floor;
        for (const Entry& e : theta[a].inc) th[e.g] = e.v;
        touched.clear();
        for (std::size_t k = author_docs.p[a]; k < author_docs.p[a + 1]; ++k) {
          const std::size_t d = static_cast<std::size_t>(author_docs.idx[k]);
          const double na =
              static_cast<double>(c.doc_authors.p[d + 1] - c.doc_authors.p[d]);
          for (std::size_t e = 0; e < Rd[d].size(); ++e) {
            const int g = Rd[d][e].g;
            const double dn = den[d][e].v;
            // den > 0 whenever r_sG > 0; the even split is only a guard
            const double add = dn > 0.0 ? Rd[d][e].v * (fl + th[g]) / dn : Rd[d][e].v / na;
            if (add <= 0.0) continue;
            if (!seen[g]) {
              seen[g] = 1;
              touched.push_back(g);
            }
            credit[g] += add;
          }
        }
        std::sort(touched.begin(), touched.end());
        double total = 0.0;
        for (int g : touched) total += credit[g];
        const double pca = author_pc[a];
        if (pca > 0.0 || total > 0.0) {
          const double norm = total + pca * static_cast<double>(K);
          out[a].floor = pca / norm;
          out[a].inc.reserve(touched.size());
          for (int g : touched) out[a].inc.push_back({g, credit[g] / norm});
        } else {
          out[a] = theta[a];  // a profile with no sentences keeps its previous value
        }
        for (int g : touched) {
          credit[g] = 0.0;
          seen[g] = 0;
        }
        for (const Entry& e : theta[a].inc) th[e.g] = 0.0;
      }
    }
  });
  return out;
}

double theta_log_prior(const std::vector<Profile>& theta, int n_terms,
                       const std::vector<double>& author_pc, bool normalised) {
  double lp = 0.0;
  const double K = static_cast<double>(n_terms);
  for (std::size_t a = 0; a < theta.size(); ++a) {
    const double pca = author_pc[a];
    if (pca <= 0.0) continue;
    const Profile& pr = theta[a];
    const double n_floor = K - static_cast<double>(pr.inc.size());
    if (n_floor > 0.0) {
      if (!(pr.floor > 0.0)) return NEG_INF;
      lp += pca * n_floor * std::log(pr.floor);
    }
    for (const Entry& e : pr.inc) lp += pca * std::log(pr.floor + e.v);
    // log Gamma(K (c + 1)) - K log Gamma(c + 1)
    if (normalised) lp += std::lgamma(K * (pca + 1.0)) - K * std::lgamma(pca + 1.0);
  }
  return lp;
}

int heldout_fold(std::uint64_t seed, std::size_t s) {
  std::uint64_t x = seed ^ (0xA24BAED4963EE407ULL * (static_cast<std::uint64_t>(s) + 1));
  return static_cast<int>(splitmix64(x) >> 63);
}

double heldout_value(const HeldOut& h, std::size_t i0, std::size_t i1, double K, double c) {
  double v = 0.0;
  for (std::size_t i = i0; i < i1; ++i) v += std::log(h.rho[i] + c) - std::log(h.n_other[i] + K * c);
  return v;
}

HeldOut choose_author_pc(const Corpus& c, const Resp& resp, const std::vector<Profile>& theta,
                         const Csc& author_docs, const Control& ctl, const Runner& run) {
  if (resp.lflat.size() != resp.top.size()) {
    throw std::logic_error("held-out choice needs the E-step's sums over all terms");
  }
  const std::size_t K = static_cast<std::size_t>(c.n_terms);
  const double Kd = static_cast<double>(K);
  const std::size_t A = theta.size();
  const double ulo = std::log(ctl.author_pc_lo), uhi = std::log(ctl.author_pc_hi);
  // per profile block: its pairs, concatenated in profile order afterwards
  const std::vector<std::size_t> acuts = even_blocks(A, AUTH_BLOCK);
  const std::size_t nb = acuts.size() - 1;
  std::vector<HeldOut> part(nb);
  HeldOut out;
  out.c.assign(A, ctl.author_pc_hi);
  out.value.assign(A, 0.0);
  run(nb, [&](std::size_t b0, std::size_t b1) {
    std::vector<double> th(K, 0.0), n0(K, 0.0), n1(K, 0.0), pgd;
    std::vector<char> seen(K, 0);
    std::vector<int> touched;
    for (std::size_t b = b0; b < b1; ++b) {
      HeldOut& h = part[b];
      h.ptr.push_back(0);
      for (std::size_t a = acuts[b]; a < acuts[b + 1]; ++a) {
        const double fl = theta[a].floor;
        for (const Entry& e : theta[a].inc) th[e.g] = e.v;
        touched.clear();
        pgd.clear();
        double N[2] = {0.0, 0.0};
        // (1) the two folds' credits n^f_aG = sum_{s in f} r_sG theta_aG / den_dG,
        // keeping P(G | d) = den_dG / n_d for every stored entry
        for (std::size_t k = author_docs.p[a]; k < author_docs.p[a + 1]; ++k) {
          const std::size_t d = static_cast<std::size_t>(author_docs.idx[k]);
          const std::size_t x0 = c.doc_authors.p[d], x1 = c.doc_authors.p[d + 1];
          const double na = static_cast<double>(x1 - x0);
          for (std::size_t s = c.doc_ptr[d]; s < c.doc_ptr[d + 1]; ++s) {
            std::vector<double>& nf = heldout_fold(ctl.seed, s) == 0 ? n0 : n1;
            double& Nf = heldout_fold(ctl.seed, s) == 0 ? N[0] : N[1];
            for (std::size_t e = resp.p[s]; e < resp.p[s + 1]; ++e) {
              const int g = resp.g[e];
              const double ta = fl + th[g];
              double den = ta;
              if (x1 - x0 > 1) {
                den = 0.0;
                for (std::size_t q = x0; q < x1; ++q) {
                  den += value_of(theta[static_cast<std::size_t>(c.doc_authors.idx[q])], g);
                }
              }
              pgd.push_back(den / na);
              const double add = den > 0.0 ? resp.r[e] * ta / den : resp.r[e] / na;
              if (!seen[g]) {
                seen[g] = 1;
                touched.push_back(g);
              }
              nf[g] += add;
              Nf += add;
            }
          }
        }
        // (2) rho_s = S1_s / S0_s = sum_G n^{other fold}_G L_sG / S0_s over the stored
        // entries, with L_sG / S0_s = r_sG exp(lflat_s) / P(G | d)
        std::size_t ip = 0;
        for (std::size_t k = author_docs.p[a]; k < author_docs.p[a + 1]; ++k) {
          const std::size_t d = static_cast<std::size_t>(author_docs.idx[k]);
          for (std::size_t s = c.doc_ptr[d]; s < c.doc_ptr[d + 1]; ++s) {
            const int f = heldout_fold(ctl.seed, s);
            const std::vector<double>& no = f == 0 ? n1 : n0;
            const double sc = std::exp(resp.lflat[s]);
            double rho = 0.0;
            for (std::size_t e = resp.p[s]; e < resp.p[s + 1]; ++e, ++ip) {
              if (pgd[ip] > 0.0) rho += no[resp.g[e]] * resp.r[e] * sc / pgd[ip];
            }
            if (!std::isfinite(rho)) rho = 0.0;  // no sums (a document without prior mass)
            h.sent.push_back(s);
            h.fold.push_back(f);
            h.rho.push_back(rho);
            h.n_other.push_back(f == 0 ? N[1] : N[0]);
            h.ls0.push_back(resp.ls0[s]);
          }
        }
        for (int g : touched) {
          n0[g] = 0.0;
          n1[g] = 0.0;
          seen[g] = 0;
        }
        for (const Entry& e : theta[a].inc) th[e.g] = 0.0;
        const std::size_t i0 = h.ptr.back(), i1 = h.rho.size();
        h.ptr.push_back(i1);
        // (3) maximise H(exp(u)) over u in [ulo, uhi]: a grid of steps of about a
        // quarter decade, then golden sections between the best point's neighbours
        // (maximise_grid_golden). It runs on x = -u so that its first-best rule gives
        // ties to the larger prior count; the refined point replaces the grid's best
        // only when it is better by more than rounding.
        const auto H = [&](double x) { return heldout_value(h, i0, i1, Kd, std::exp(-x)); };
        const int ng = std::max(1, static_cast<int>(std::lround((uhi - ulo) / (0.25 * std::log(10.0)))));
        const Argmax1D r = maximise_grid_golden(H, -uhi, -ulo, ng, 60, 1e-10);
        const bool refined = r.value > r.grid_value + 1e-12 * (1.0 + std::fabs(r.grid_value));
        const double ub = -(refined ? r.x : r.grid_x);
        const double hb = refined ? r.value : r.grid_value;
        out.c[a] = std::exp(ub);
        out.value[a] = hb;
      }
    }
  });
  out.ptr.push_back(0);
  for (std::size_t b = 0; b < nb; ++b) {
    const HeldOut& h = part[b];
    const std::size_t base = out.sent.size();
    for (std::size_t k = 1; k < h.ptr.size(); ++k) out.ptr.push_back(base + h.ptr[k]);
    if (ctl.keep_heldout) {
      out.sent.insert(out.sent.end(), h.sent.begin(), h.sent.end());
      out.fold.insert(out.fold.end(), h.fold.begin(), h.fold.end());
      out.rho.insert(out.rho.end(), h.rho.begin(), h.rho.end());
      out.n_other.insert(out.n_other.end(), h.n_other.begin(), h.n_other.end());
      out.ls0.insert(out.ls0.end(), h.ls0.begin(), h.ls0.end());
    }
  }
  if (!ctl.keep_heldout) out.ptr.clear();
  return out;
}

std::vector<double> term_distribution(const Resp& resp, int n_terms) {
  std::vector<double> pi(static_cast<std::size_t>(n_terms), 0.0);
  const std::size_t S = resp.p.size() - 1;
  for (std::size_t e = 0; e < resp.g.size(); ++e) pi[resp.g[e]] += resp.r[e];
  if (S > 0) {
    for (double& x : pi) x /= static_cast<double>(S);
  }
  return pi;
}

Fit fit_em(const Corpus& c, int n_profiles, const Control& ctl, const Runner& run,
           const std::function<void(int)>& tick) {
  if (!(ctl.pseudocount > 0.0)) throw std::invalid_argument("pseudocount must be > 0");
  const bool auto_pc = ctl.auto_author_pc;
  if (auto_pc && ctl.hard) throw std::invalid_argument("a held-out prior count needs soft EM");
  if (auto_pc && !(ctl.author_pc_lo > 0.0 && ctl.author_pc_hi >= ctl.author_pc_lo)) {
    throw std::invalid_argument("bad search interval for the prior count");
  }
  const Csc word_sent = transpose(c.sentences, c.n_words);
  const Csc author_docs = transpose(c.doc_authors, n_profiles);
  Fit fit;
  // start: phi from the definitions alone, uniform author profiles
  const bool bgm = ctl.background > 0.0;
  fit.phi = bgm ? build_phi_bg(c, nullptr, nullptr, word_sent, ctl.pseudocount, ctl.background, run)
                : build_phi(c, nullptr, word_sent, ctl.pseudocount, run);
  double bg_const = bgm ? background_constant(fit.phi, word_sent) : 0.0;
  // uniform profiles: floor 1 / K, no increments
  Profile uniform;
  uniform.floor = 1.0 / static_cast<double>(c.n_terms);
  fit.theta.assign(static_cast<std::size_t>(n_profiles), uniform);
  // prior counts: fixed, or (auto) chosen after the first E-step (after every one
  // with reselect_author_pc); the first iteration's uniform profiles are scored
  // with the top of the search interval
  std::vector<double> apc(static_cast<std::size_t>(n_profiles),
                          auto_pc ? ctl.author_pc_hi : ctl.author_pseudocount);
  double theta_lp = theta_log_prior(fit.theta, c.n_terms, apc, auto_pc);
  std::vector<int> prev;
  auto clock_start = std::chrono::steady_clock::now();
  for (int it = 1; it <= ctl.max_iter; ++it) {
    // the sums over all terms are needed only by the E-steps the counts are chosen from
    Control ectl = ctl;
    ectl.auto_author_pc = auto_pc && (it == 1 || ctl.reselect_author_pc);
    fit.resp = e_step(c, fit.phi, fit.theta, ectl, run);
    const auto now = std::chrono::steady_clock::now();
    fit.seconds.push_back(std::chrono::duration<double>(now - clock_start).count());
    clock_start = now;
    fit.iterations = it;
    const double obj = fit.resp.loglik + bg_const + fit.phi.log_prior + theta_lp;
    fit.objective.push_back(obj);
    fit.n_full.push_back(fit.resp.n_full);
    double changed = static_cast<double>(fit.resp.top.size());
    if (it == 1) {
      fit.baseline = fit.resp.top;
    } else {
      changed = 0.0;
      for (std::size_t s = 0; s < prev.size(); ++s) changed += (prev[s] != fit.resp.top[s]);
    }
    fit.n_changed.push_back(changed);
    prev = fit.resp.top;
    if (it > 1) {
      // the previous parameters under the prior counts of the last M-step
      const double before = fit.objective_prev.back();
      const double rel = std::fabs(obj - before) / std::max(1.0, std::fabs(before));
      if ((ctl.hard && changed == 0.0) || rel < ctl.tol) {
        fit.converged = true;
        break;
      }
    }
    if (it == ctl.max_iter) break;
    tick(it);
    clock_start = std::chrono::steady_clock::now();
    // M-step, with the prior counts chosen from this E-step when due; the
    // current parameters' objective under them is what the next one improves on
    if (auto_pc && (it == 1 || ctl.reselect_author_pc)) {
      fit.heldout = choose_author_pc(c, fit.resp, fit.theta, author_docs, ctl, run);
      apc = fit.heldout.c;
      theta_lp = theta_log_prior(fit.theta, c.n_terms, apc, true);
    }
    fit.objective_prev.push_back(fit.resp.loglik + bg_const + fit.phi.log_prior + theta_lp);
    // counts chosen once: the first iteration is rescored with them, so the whole
    // trace is the objective under the same counts
    if (auto_pc && it == 1 && !ctl.reselect_author_pc) fit.objective[0] = fit.objective_prev[0];
    std::vector<Profile> th = m_step_theta(c, fit.resp, fit.theta, author_docs, apc, run);
    if (bgm) {
      Phi next = build_phi_bg(c, &fit.resp, &fit.phi, word_sent, ctl.pseudocount, ctl.background, run);
      fit.phi = std::move(next);
      bg_const = background_constant(fit.phi, word_sent);
    } else {
      fit.phi = build_phi(c, &fit.resp, word_sent, ctl.pseudocount, run);
    }
    fit.theta.swap(th);
    theta_lp = theta_log_prior(fit.theta, c.n_terms, apc, auto_pc);
  }
  fit.author_pc = apc;
  return fit;
}

}  // namespace go
}  // namespace augp
