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
#include "go_annotator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "rng.h"

namespace augp {
namespace go {

namespace {

constexpr std::size_t SENT_BLOCK = 256;  // target sentences per E-step block
constexpr std::size_t WORD_BLOCK = 512;  // words per phi block
constexpr std::size_t DOC_BLOCK = 128;   // documents per theta block
constexpr std::size_t AUTH_BLOCK = 64;   // profiles per theta block
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

// theta_aG; an empty profile stands for the uniform distribution over n_terms.
double value_of(const SparseVec& v, int g, int n_terms) {
  if (v.empty()) return 1.0 / static_cast<double>(n_terms);
  auto it = std::lower_bound(v.begin(), v.end(), g,
                             [](const Entry& e, int key) { return e.g < key; });
  return (it != v.end() && it->g == g) ? it->v : 0.0;
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
            const double zg = old->zsum[g];
            const double t = zg > 0.0 ? (1.0 - old->lambda) * old->count[e] / zg
                                      : (1.0 - old->lambda) / static_cast<double>(V);
            frac[g] = t / (t + lb);
          }
          for (std::size_t k = word_sent.p[w]; k < word_sent.p[w + 1]; ++k) {
            const std::size_t s = static_cast<std::size_t>(word_sent.idx[k]);
            const double n = word_sent.val[k];
            for (std::size_t e = resp->p[s]; e < resp->p[s + 1]; ++e) {
              const int g = resp->g[e];
              const double add = n * resp->r[e] * frac[g];
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
  // terms with Z_G = 0 use the uniform distribution: an entry for every word
  std::vector<int> empty;
  for (std::size_t g = 0; g < K; ++g) {
    if (!(phi.zsum[g] > 0.0)) empty.push_back(static_cast<int>(g));
  }
  phi.wp.assign(V + 1, 0);
  phi.g.reserve(eg.size() + empty.size() * V);
  phi.count.reserve(eg.size() + empty.size() * V);
  phi.defn.reserve(eg.size() + empty.size() * V);
  phi.l1p.reserve(eg.size() + empty.size() * V);
  const double lam = phi.lambda;
  for (std::size_t v = 0; v < V; ++v) {
    const double lb = lam * phi.beta[v];
    std::size_t e = wp[v], q = 0;
    while (e < wp[v + 1] || q < empty.size()) {
      const bool take_e = q >= empty.size() || (e < wp[v + 1] && eg[e] < empty[q]);
      if (take_e) {
        phi.g.push_back(eg[e]);
        phi.count.push_back(ec[e]);
        phi.defn.push_back(eo[e]);
        phi.l1p.push_back(std::log1p((1.0 - lam) * ec[e] / (phi.zsum[eg[e]] * lb)));
        ++e;
      } else {
        phi.g.push_back(empty[q]);
        phi.count.push_back(0.0);
        phi.defn.push_back(0.0);
        phi.l1p.push_back(std::log1p((1.0 - lam) / (static_cast<double>(V) * lb)));
        ++q;
      }
    }
    phi.wp[v + 1] = phi.g.size();
  }
  phi.logpz.assign(K, 0.0);
  // log prior: Dirichlet(O_G + 1) on phi_G, Dirichlet(D + pc + 1) on beta
  double lp = 0.0;
  for (std::size_t e = 0; e < eg.size(); ++e) {
    if (eo[e] > 0.0) lp += eo[e] * std::log(ec[e] / phi.zsum[eg[e]]);
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

Resp e_step(const Corpus& c, const Phi& phi, const std::vector<SparseVec>& theta,
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
  std::vector<double> bll(nb, 0.0);
  Resp out;
  out.top.assign(S, -1);
  out.top_r.assign(S, 0.0);
  const double log_trunc = ctl.truncate > 0.0 ? std::log(ctl.truncate) : NEG_INF;
  const double lpu = -std::log(static_cast<double>(K));

  // Fast path (only with truncate > 0) for documents whose authors all have the
  // uniform profile (the first iteration): terms sharing no word with the
  // sentence have score lpu + len * logpz_G, whose maximum and log-sum-exp
  // depend only on the sentence length and are cached here.
  std::vector<double> lens, len_max, len_lse;
  bool any_uniform = false;
  for (const SparseVec& v : theta) any_uniform = any_uniform || v.empty();
  const bool fast_ok = ctl.truncate > 0.0 && any_uniform;
  if (fast_ok) {
    for (std::size_t s = 0; s < S; ++s) {
      double len = 0.0;
      for (std::size_t k = c.sentences.p[s]; k < c.sentences.p[s + 1]; ++k) len += c.sentences.val[k];
      lens.push_back(len);
    }
    std::sort(lens.begin(), lens.end());
    lens.erase(std::unique(lens.begin(), lens.end()), lens.end());
    for (double len : lens) {
      double mx = NEG_INF;
      for (std::size_t g = 0; g < K; ++g) mx = std::max(mx, lpu + len * phi.logpz[g]);
      double sm = 0.0;
      for (std::size_t g = 0; g < K; ++g) sm += std::exp(lpu + len * phi.logpz[g] - mx);
      len_max.push_back(mx);
      len_lse.push_back(mx + std::log(sm));
    }
  }

  run(nb, [&](std::size_t b0, std::size_t b1) {
    std::vector<int> pos(K, -1), mark(K, -1);
    std::vector<int> support, sorted, touched, order;
    std::vector<double> pgd, lp, sc, ex, acc;
    for (std::size_t b = b0; b < b1; ++b) {
      double ll = 0.0;
      for (std::size_t d = dcuts[b]; d < dcuts[b + 1]; ++d) {
        const std::size_t a0 = c.doc_authors.p[d], a1 = c.doc_authors.p[d + 1];
        const double na = static_cast<double>(a1 - a0);
        std::size_t n_unif = 0;  // profiles stored as empty = uniform over all terms
        for (std::size_t k = a0; k < a1; ++k) {
          if (theta[static_cast<std::size_t>(c.doc_authors.idx[k])].empty()) ++n_unif;
        }
        const bool fast_doc = fast_ok && n_unif == a1 - a0;
        bool built = false;
        // P(G | D) = mean over the document's profiles, on its support
        auto build = [&]() {
          support.clear();
          pgd.clear();
          for (std::size_t k = a0; k < a1; ++k) {
            for (const Entry& e : theta[static_cast<std::size_t>(c.doc_authors.idx[k])]) {
              if (pos[e.g] < 0) {
                pos[e.g] = static_cast<int>(support.size());
                support.push_back(e.g);
                pgd.push_back(0.0);
              }
              pgd[pos[e.g]] += e.v;
            }
          }
          if (n_unif > 0) {
            const double u = static_cast<double>(n_unif) / static_cast<double>(K);
            for (std::size_t g = 0; g < K; ++g) {
              if (pos[g] < 0) {
                pos[g] = static_cast<int>(support.size());
                support.push_back(static_cast<int>(g));
                pgd.push_back(0.0);
              }
              pgd[pos[g]] += u;
            }
          }
          const std::size_t ns = support.size();
          // order the support by term index so rows come out sorted
          if (ns * 8 > K) {
            sorted.clear();
            for (std::size_t g = 0; g < K; ++g) {
              if (pos[g] >= 0) sorted.push_back(static_cast<int>(g));
            }
          } else {
            sorted = support;
            std::sort(sorted.begin(), sorted.end());
          }
          lp.resize(ns);
          for (std::size_t k = 0; k < ns; ++k) lp[k] = pgd[pos[sorted[k]]];
          for (std::size_t k = 0; k < ns; ++k) {
            support[k] = sorted[k];
            pos[sorted[k]] = static_cast<int>(k);
            pgd[k] = lp[k];
          }
          for (std::size_t k = 0; k < ns; ++k) lp[k] = std::log(pgd[k] / na);
          sc.resize(ns);
          ex.resize(ns);
          built = true;
        };
        if (!fast_doc) build();

        for (std::size_t s = c.doc_ptr[d]; s < c.doc_ptr[d + 1]; ++s) {
          const std::size_t w0 = c.sentences.p[s], w1 = c.sentences.p[s + 1];
          double len = 0.0;
          for (std::size_t k = w0; k < w1; ++k) len += c.sentences.val[k];

          if (fast_doc) {
            // scores of the terms that share a word with the sentence
            touched.clear();
            acc.clear();
            for (std::size_t k = w0; k < w1; ++k) {
              const std::size_t w = static_cast<std::size_t>(c.sentences.idx[k]);
              const double n = c.sentences.val[k];
              for (std::size_t e = phi.wp[w]; e < phi.wp[w + 1]; ++e) {
                const int g = phi.g[e];
                if (mark[g] < 0) {
                  mark[g] = static_cast<int>(touched.size());
                  touched.push_back(g);
                  acc.push_back(lpu + len * phi.logpz[g]);
                }
                acc[mark[g]] += n * phi.l1p[e];
              }
            }
            const std::size_t li = static_cast<std::size_t>(
                std::lower_bound(lens.begin(), lens.end(), len) - lens.begin());
            bool done = false;
            double mx = NEG_INF;
            for (double a : acc) mx = std::max(mx, a);
            if (!touched.empty() && mx > len_max[li]) {
              double sum_t = 0.0, base = 0.0;
              for (std::size_t k = 0; k < touched.size(); ++k) {
                sum_t += std::exp(acc[k] - mx);
                base += std::exp(lpu + len * phi.logpz[touched[k]] - mx);
              }
              const double s_non = std::max(0.0, std::exp(len_lse[li] - mx) - base);
              const double sum = sum_t + s_non;
              // every term outside the overlap is below the truncation level
              if (std::exp(len_max[li] - mx) / sum < ctl.truncate) {
                done = true;
                ll += mx + std::log(sum);
                const double tie_tol = 1e-12 * (1.0 + std::fabs(mx));
                int best = -1;
                std::uint64_t best_rank = 0;
                for (std::size_t k = 0; k < touched.size(); ++k) {
                  if (acc[k] >= mx - tie_tol) {
                    const std::uint64_t rk = tie_rank(ctl.seed, s, touched[k]);
                    if (best < 0 || rk < best_rank || (rk == best_rank && touched[k] < best)) {
                      best = touched[k];
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
                  order.clear();
                  double ksum = 0.0;
                  for (std::size_t k = 0; k < touched.size(); ++k) {
                    const double r = std::exp(acc[k] - mx) / sum;
                    if (r >= ctl.truncate || touched[k] == best) {
                      order.push_back(static_cast<int>(k));
                      ksum += r;
                    }
                  }
                  std::sort(order.begin(), order.end(),
                            [&](int x, int y) { return touched[x] < touched[y]; });
                  for (int k : order) {
                    const double r = std::exp(acc[k] - mx) / sum / ksum;
                    bg[b].push_back(touched[k]);
                    br[b].push_back(r);
                    if (touched[k] == best) out.top_r[s] = r;
                  }
                  kept = order.size();
                }
                bn[b].push_back(kept);
              }
            }
            for (int g : touched) mark[g] = -1;
            if (done) continue;
            if (!built) build();
          }

          const std::size_t ns = support.size();
          for (std::size_t k = 0; k < ns; ++k) sc[k] = lp[k] + len * phi.logpz[support[k]];
          for (std::size_t k = w0; k < w1; ++k) {
            const std::size_t w = static_cast<std::size_t>(c.sentences.idx[k]);
            const double n = c.sentences.val[k];
            for (std::size_t e = phi.wp[w]; e < phi.wp[w + 1]; ++e) {
              const int q = pos[phi.g[e]];
              if (q >= 0) sc[q] += n * phi.l1p[e];
            }
          }
          double mx = NEG_INF;
          for (std::size_t k = 0; k < ns; ++k) mx = std::max(mx, sc[k]);
          // deterministic argmax: exact ties broken by a seeded hash of (sentence, term)
          const double tie_tol = 1e-12 * (1.0 + std::fabs(mx));
          int best = -1;
          std::uint64_t best_rank = 0;
          for (std::size_t k = 0; k < ns; ++k) {
            if (sc[k] >= mx - tie_tol) {
              const std::uint64_t rk = tie_rank(ctl.seed, s, support[k]);
              if (best < 0 || rk < best_rank || (rk == best_rank && support[k] < best)) {
                best = support[k];
                best_rank = rk;
              }
            }
          }
          double sum = 0.0;
          for (std::size_t k = 0; k < ns; ++k) {
            const double z = sc[k] - mx;
            ex[k] = (z >= log_trunc) ? std::exp(z) : 0.0;
            sum += ex[k];
          }
          ll += mx + std::log(sum);
          out.top[s] = best;
          std::size_t kept = 0;
          if (ctl.hard) {
            out.top_r[s] = 1.0;
            bg[b].push_back(best);
            br[b].push_back(1.0);
            kept = 1;
          } else {
            // with truncation, keep entries >= truncate (and always the best term)
            double ksum = 0.0;
            for (std::size_t k = 0; k < ns; ++k) {
              if (ex[k] > 0.0 && (ctl.truncate <= 0.0 || ex[k] / sum >= ctl.truncate ||
                                  support[k] == best)) {
                ksum += ex[k];
              }
            }
            for (std::size_t k = 0; k < ns; ++k) {
              if (ex[k] > 0.0 && (ctl.truncate <= 0.0 || ex[k] / sum >= ctl.truncate ||
                                  support[k] == best)) {
                bg[b].push_back(support[k]);
                br[b].push_back(ex[k] / ksum);
                if (support[k] == best) out.top_r[s] = ex[k] / ksum;
                ++kept;
              }
            }
          }
          bn[b].push_back(kept);
        }
        if (built) {
          for (int g : support) pos[g] = -1;
        }
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
  }
  out.g.reserve(out.p[S]);
  out.r.reserve(out.p[S]);
  for (std::size_t b = 0; b < nb; ++b) {
    out.g.insert(out.g.end(), bg[b].begin(), bg[b].end());
    out.r.insert(out.r.end(), br[b].begin(), br[b].end());
  }
  return out;
}

std::vector<SparseVec> m_step_theta(const Corpus& c, const Resp& resp,
                                    const std::vector<SparseVec>& theta,
                                    const Csc& author_docs, double author_pc,
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
            sden += value_of(theta[static_cast<std::size_t>(c.doc_authors.idx[k])], g, c.n_terms);
          }
          den[d].push_back({g, sden});
          acc[g] = 0.0;
          seen[g] = 0;
        }
      }
    }
  });
  // (b) per profile: credit_aG = sum_{d with a} R_dG theta_aG / den_dG
  const std::size_t A = theta.size();
  std::vector<SparseVec> out(A);
  const std::vector<std::size_t> acuts = even_blocks(A, AUTH_BLOCK);
  run(acuts.size() - 1, [&](std::size_t b0, std::size_t b1) {
    std::vector<double> th(K, 0.0), credit(K, 0.0);
    std::vector<char> seen(K, 0);
    std::vector<int> touched;
    for (std::size_t b = b0; b < b1; ++b) {
      for (std::size_t a = acuts[b]; a < acuts[b + 1]; ++a) {
        if (theta[a].empty()) {
          std::fill(th.begin(), th.end(), 1.0 / static_cast<double>(K));
        } else {
          for (const Entry& e : theta[a]) th[e.g] = e.v;
        }
        touched.clear();
        for (std::size_t k = author_docs.p[a]; k < author_docs.p[a + 1]; ++k) {
          const std::size_t d = static_cast<std::size_t>(author_docs.idx[k]);
          const double na =
              static_cast<double>(c.doc_authors.p[d + 1] - c.doc_authors.p[d]);
          for (std::size_t e = 0; e < Rd[d].size(); ++e) {
            const int g = Rd[d][e].g;
            const double dn = den[d][e].v;
            // den > 0 whenever r_sG > 0; the even split is only a guard
            const double add = dn > 0.0 ? Rd[d][e].v * th[g] / dn : Rd[d][e].v / na;
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
        if (author_pc > 0.0) {
          const double norm = total + author_pc * static_cast<double>(K);
          out[a].reserve(K);
          for (std::size_t g = 0; g < K; ++g) {
            out[a].push_back({static_cast<int>(g), (credit[g] + author_pc) / norm});
          }
        } else if (total > 0.0) {
          out[a].reserve(touched.size());
          for (int g : touched) out[a].push_back({g, credit[g] / total});
        } else {
          out[a] = theta[a];  // a profile with no sentences keeps its previous value
        }
        for (int g : touched) {
          credit[g] = 0.0;
          seen[g] = 0;
        }
        if (theta[a].empty()) {
          std::fill(th.begin(), th.end(), 0.0);
        } else {
          for (const Entry& e : theta[a]) th[e.g] = 0.0;
        }
      }
    }
  });
  return out;
}

double theta_log_prior(const std::vector<SparseVec>& theta, int n_terms, double author_pc) {
  if (author_pc <= 0.0) return 0.0;
  double lp = 0.0;
  for (const SparseVec& v : theta) {
    if (v.empty()) {  // uniform
      lp += author_pc * static_cast<double>(n_terms) * std::log(1.0 / static_cast<double>(n_terms));
      continue;
    }
    if (v.size() < static_cast<std::size_t>(n_terms)) return NEG_INF;
    for (const Entry& e : v) lp += author_pc * std::log(e.v);
  }
  return lp;
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
  const Csc word_sent = transpose(c.sentences, c.n_words);
  const Csc author_docs = transpose(c.doc_authors, n_profiles);
  Fit fit;
  // start: phi from the definitions alone, uniform author profiles
  const bool bgm = ctl.background > 0.0;
  fit.phi = bgm ? build_phi_bg(c, nullptr, nullptr, word_sent, ctl.pseudocount, ctl.background, run)
                : build_phi(c, nullptr, word_sent, ctl.pseudocount, run);
  double bg_const = bgm ? background_constant(fit.phi, word_sent) : 0.0;
  // empty profile = uniform (saves a dense authors x terms start)
  fit.theta.assign(static_cast<std::size_t>(n_profiles), SparseVec());
  double theta_lp = theta_log_prior(fit.theta, c.n_terms, ctl.author_pseudocount);
  std::vector<int> prev;
  auto clock_start = std::chrono::steady_clock::now();
  for (int it = 1; it <= ctl.max_iter; ++it) {
    fit.resp = e_step(c, fit.phi, fit.theta, ctl, run);
    const auto now = std::chrono::steady_clock::now();
    fit.seconds.push_back(std::chrono::duration<double>(now - clock_start).count());
    clock_start = now;
    fit.iterations = it;
    const double obj = fit.resp.loglik + bg_const + fit.phi.log_prior + theta_lp;
    fit.objective.push_back(obj);
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
      const double before = fit.objective[fit.objective.size() - 2];
      const double rel = std::fabs(obj - before) / std::max(1.0, std::fabs(before));
      if ((ctl.hard && changed == 0.0) || rel < ctl.tol) {
        fit.converged = true;
        break;
      }
    }
    if (it == ctl.max_iter) break;
    tick(it);
    clock_start = std::chrono::steady_clock::now();
    // M-step
    std::vector<SparseVec> th =
        m_step_theta(c, fit.resp, fit.theta, author_docs, ctl.author_pseudocount, run);
    if (bgm) {
      Phi next = build_phi_bg(c, &fit.resp, &fit.phi, word_sent, ctl.pseudocount, ctl.background, run);
      fit.phi = std::move(next);
      bg_const = background_constant(fit.phi, word_sent);
    } else {
      fit.phi = build_phi(c, &fit.resp, word_sent, ctl.pseudocount, run);
    }
    fit.theta.swap(th);
    theta_lp = theta_log_prior(fit.theta, c.n_terms, ctl.author_pseudocount);
  }
  return fit;
}

}  // namespace go
}  // namespace augp
