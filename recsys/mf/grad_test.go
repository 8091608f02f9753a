package mf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// fdCheck compares an analytic gradient with central differences of f at
// x, coordinate by coordinate.
func fdCheck(t *testing.T, what string, x, grad []float64, f func() float64) {
	t.Helper()
	const h = 1e-6
	for k := range x {
		old := x[k]
		x[k] = old + h
		up := f()
		x[k] = old - h
		down := f()
		x[k] = old
		num := (up - down) / (2 * h)
		if diff := math.Abs(num - grad[k]); diff > 1e-6*math.Max(1, math.Abs(num)) {
			t.Errorf("%s[%d]: analytic %.9g, finite difference %.9g", what, k, grad[k], num)
		}
	}
}

func randVecs(rng *rand.Rand, n, k int, sd float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, k)
		gaussian(rng, out[i], sd)
	}
	return out
}

// TestPairTerm_gradient checks ∂θ̂/∂u, ∂θ̂/∂v_p and ∂θ̂/∂v_q of every
// loss, with φ the identity and tanh, against finite differences.
func TestPairTerm_gradient(t *testing.T) {
	const k, np, nq = 4, 3, 5
	for _, loss := range []Loss{SquareHinge, Square, Sigmoid, Logistic} {
		for _, rho := range []float64{0, 1.5} {
			t.Run(fmt.Sprintf("%v/rho=%g", loss, rho), func(t *testing.T) {
				o := objective{loss: loss, beta: 1.7, rho: rho}
				rng := rand.New(rand.NewPCG(uint64(loss), uint64(rho*10)))
				u := make([]float64, k)
				gaussian(rng, u, 1)
				vp, vq := randVecs(rng, np, k, 1), randVecs(rng, nq, k, 1)
				a, b := make([]float64, np), make([]float64, nq)
				for i := range a {
					a[i] = rng.Float64()
				}
				for i := range b {
					b[i] = rng.Float64() / nq
				}
				sp, sq := make([]float64, np), make([]float64, nq)
				c, d, lp := make([]float64, np), make([]float64, nq), make([]float64, np*nq)
				theta := func() float64 {
					for i := range sp {
						sp[i] = dot(u, vp[i])
					}
					for i := range sq {
						sq[i] = dot(u, vq[i])
					}
					return o.pairTerm(sp, a, sq, b, c, d, lp, true)
				}
				theta()
				gu := make([]float64, k)
				for p := range vp {
					axpy(c[p], vp[p], gu)
				}
				for q := range vq {
					axpy(d[q], vq[q], gu)
				}
				gp, gq := make([][]float64, np), make([][]float64, nq)
				for p := range gp {
					gp[p] = make([]float64, k)
					axpy(c[p], u, gp[p])
				}
				for q := range gq {
					gq[q] = make([]float64, k)
					axpy(d[q], u, gq[q])
				}
				fdCheck(t, "u", u, gu, theta)
				for p := range vp {
					fdCheck(t, fmt.Sprintf("v_p%d", p), vp[p], gp[p], theta)
				}
				for q := range vq {
					fdCheck(t, fmt.Sprintf("v_q%d", q), vq[q], gq[q], theta)
				}
				// Without the value, the derivatives are the same when φ is
				// the identity.
				if rho == 0 {
					c2, d2 := make([]float64, np), make([]float64, nq)
					o.pairTerm(sp, a, sq, b, c2, d2, lp, false)
					for p := range c {
						if math.Abs(c[p]-c2[p]) > 1e-12 {
							t.Errorf("c[%d] without the value: %g, want %g", p, c2[p], c[p])
						}
					}
					for q := range d {
						if math.Abs(d[q]-d2[q]) > 1e-12 {
							t.Errorf("d[%d] without the value: %g, want %g", q, d2[q], d[q])
						}
					}
				}
			})
		}
	}
}

// TestObjective_lossValues pins the losses of seed 003 §2.1 at a few
// points.
func TestObjective_lossValues(t *testing.T) {
	for _, tc := range []struct {
		loss    Loss
		g, want float64
	}{
		{SquareHinge, 0, 0.5}, {SquareHinge, 2, 0}, {SquareHinge, -1, 2},
		{Square, 0, 0.5}, {Square, 2, 0.5}, {Square, 3, 2},
		{Sigmoid, 0, -0.5}, {Sigmoid, math.Log(3) / 2, -0.75},
		{Logistic, 0, math.Ln2}, {Logistic, -40, 80},
	} {
		o := objective{loss: tc.loss, beta: 2}
		if got, _ := o.eval(tc.g); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%v L(%g) = %g, want %g", tc.loss, tc.g, got, tc.want)
		}
	}
}

// eq3 is Optimisation 3 of seed 003 written out directly over all items,
// for a dense 0/1 matrix: 1/m Σᵢ Σ_p g(p) φ(Σ_q L(γ) g′(q)) + λ/2(‖U‖²/m +
// ‖V‖²/n), g ∝ p̂^τ on ωᵢ and g′ ∝ (1−p̂)^τ on ω̄ᵢ.
func eq3(o objective, x [][]bool, U, V [][]float64, lambda, tau float64) float64 {
	m, n := len(U), len(V)
	phat := make([]float64, n)
	for i := range x {
		for j, r := range x[i] {
			if r {
				phat[j] += 1 / float64(m)
			}
		}
	}
	total := 0.0
	for i := range U {
		var zp, zq float64
		for j := range V {
			if x[i][j] {
				zp += math.Pow(phat[j], tau)
			} else {
				zq += math.Pow(1-phat[j], tau)
			}
		}
		for p := range V {
			if !x[i][p] {
				continue
			}
			inner := 0.0
			for q := range V {
				if x[i][q] {
					continue
				}
				l, _ := o.eval(dot(U[i], V[p]) - dot(U[i], V[q]))
				inner += l * math.Pow(1-phat[q], tau) / zq
			}
			f, _ := o.phi(inner)
			total += math.Pow(phat[p], tau) / zp * f
		}
	}
	reg := 0.0
	for _, u := range U {
		reg += dot(u, u) / float64(m)
	}
	for _, v := range V {
		reg += dot(v, v) / float64(n)
	}
	return total/float64(m) + lambda/2*reg
}

// TestEq3_gradient assembles the gradient of Eq. 3 from pairTerm with every
// relevant and irrelevant item weighted by g and g′ (Eqs. 4–5 and their
// tanh, sigmoid and logistic forms) and checks it against finite
// differences of the objective written out directly.
func TestEq3_gradient(t *testing.T) {
	const m, n, k, lambda = 4, 7, 3, 0.3
	for _, loss := range []Loss{SquareHinge, Square, Sigmoid, Logistic} {
		for _, rho := range []float64{0, 0.8} {
			for _, tau := range []float64{0, 1.5} {
				t.Run(fmt.Sprintf("%v/rho=%g/tau=%g", loss, rho, tau), func(t *testing.T) {
					o := objective{loss: loss, beta: 1.3, rho: rho}
					rng := rand.New(rand.NewPCG(uint64(loss)+7, uint64(rho*10+tau)))
					x := make([][]bool, m)
					for i := range x {
						x[i] = make([]bool, n)
						for j := range x[i] {
							x[i][j] = rng.Float64() < 0.4
						}
						x[i][i] = true      // every user has a relevant item
						x[i][n-1-i] = false // and an irrelevant one
					}
					U, V := randVecs(rng, m, k, 0.8), randVecs(rng, n, k, 0.8)
					phat := make([]float64, n)
					for i := range x {
						for j, r := range x[i] {
							if r {
								phat[j] += 1.0 / m
							}
						}
					}
					gU, gV := randVecs(rng, m, k, 0), randVecs(rng, n, k, 0)
					for i := range U {
						var pos, neg []int
						var a, b []float64
						for j := range V {
							if x[i][j] {
								pos, a = append(pos, j), append(a, math.Pow(phat[j], tau))
							} else {
								neg, b = append(neg, j), append(b, math.Pow(1-phat[j], tau))
							}
						}
						normalise(a)
						normalise(b)
						sp, sq := make([]float64, len(pos)), make([]float64, len(neg))
						for p, j := range pos {
							sp[p] = dot(U[i], V[j])
						}
						for q, j := range neg {
							sq[q] = dot(U[i], V[j])
						}
						c, d := make([]float64, len(pos)), make([]float64, len(neg))
						o.pairTerm(sp, a, sq, b, c, d, make([]float64, len(pos)*len(neg)), true)
						for p, j := range pos {
							axpy(c[p]/m, V[j], gU[i])
							axpy(c[p]/m, U[i], gV[j])
						}
						for q, j := range neg {
							axpy(d[q]/m, V[j], gU[i])
							axpy(d[q]/m, U[i], gV[j])
						}
						axpy(lambda/m, U[i], gU[i])
					}
					for j := range V {
						axpy(lambda/n, V[j], gV[j])
					}
					f := func() float64 { return eq3(o, x, U, V, lambda, tau) }
					for i := range U {
						fdCheck(t, fmt.Sprintf("u%d", i), U[i], gU[i], f)
					}
					for j := range V {
						fdCheck(t, fmt.Sprintf("v%d", j), V[j], gV[j], f)
					}
				})
			}
		}
	}
}

func normalise(w []float64) {
	s := 0.0
	for _, v := range w {
		s += v
	}
	for i := range w {
		w[i] /= s
	}
}

// TestBPRGrad_gradient checks the BPR triple loss gradient, biases
// included, against finite differences.
func TestBPRGrad_gradient(t *testing.T) {
	const k = 5
	rng := rand.New(rand.NewPCG(9, 9))
	c := &bprConfig{lambdaU: 0.3, lambdaP: 0.2, lambdaN: 0.05, lambB: 0.7}
	for trial := range 4 {
		u, vi, vj := randomVec(rng, k), randomVec(rng, k), randomVec(rng, k)
		bias := []float64{rng.NormFloat64(), rng.NormFloat64()}
		gu, gi, gj := make([]float64, k), make([]float64, k), make([]float64, k)
		_, gbi, gbj := bprGrad(c, u, vi, vj, bias[0], bias[1], gu, gi, gj)
		scratch := [3][]float64{make([]float64, k), make([]float64, k), make([]float64, k)}
		loss := func() float64 {
			l, _, _ := bprGrad(c, u, vi, vj, bias[0], bias[1], scratch[0], scratch[1], scratch[2])
			return l
		}
		// The loss itself, by its definition.
		x := bias[0] - bias[1] + dot(u, vi) - dot(u, vj)
		want := -math.Log(1/(1+math.Exp(-x))) + 0.5*(c.lambdaU*dot(u, u)+c.lambdaP*dot(vi, vi)+c.lambdaN*dot(vj, vj)+c.lambB*(bias[0]*bias[0]+bias[1]*bias[1]))
		if got := loss(); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: loss %g, want %g", trial, got, want)
		}
		fdCheck(t, "u", u, gu, loss)
		fdCheck(t, "v_i", vi, gi, loss)
		fdCheck(t, "v_j", vj, gj, loss)
		fdCheck(t, "b", bias, []float64{gbi, gbj}, loss)
	}
}

// bprStep is the step of bprGrad's gradient: u, vᵢ, vⱼ and the biases move
// by −lr·∇ (to rounding: at GOAMD64=v3 the compiler may fuse the two
// differently; at the default v1 they are equal bit for bit).
func TestBPRStep_isTheGradientStep(t *testing.T) {
	const k, lr = 7, 0.05
	rng := rand.New(rand.NewPCG(4, 2))
	c := &bprConfig{lambdaU: 0.3, lambdaP: 0.2, lambdaN: 0.05, lambB: 0.7}
	for trial := range 4 {
		u, vi, vj := randomVec(rng, k), randomVec(rng, k), randomVec(rng, k)
		bi, bj := rng.NormFloat64(), rng.NormFloat64()
		gu, gi, gj := make([]float64, k), make([]float64, k), make([]float64, k)
		_, gbi, gbj := bprGrad(c, u, vi, vj, bi, bj, gu, gi, gj)
		want := [][]float64{slices.Clone(u), slices.Clone(vi), slices.Clone(vj)}
		for v, g := range [][]float64{gu, gi, gj} {
			for f := range g {
				want[v][f] -= lr * g[f]
			}
		}
		wantBi, wantBj := bi-lr*gbi, bj-lr*gbj
		bprStep(c, lr, u, vi, vj, &bi, &bj)
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-14*max(1, math.Abs(b)) }
		for v, got := range [][]float64{u, vi, vj} {
			if !slices.EqualFunc(got, want[v], near) {
				t.Errorf("trial %d: vector %d is %v after the step, want %v", trial, v, got, want[v])
			}
		}
		if !near(bi, wantBi) || !near(bj, wantBj) {
			t.Errorf("trial %d: biases %g, %g after the step, want %g, %g", trial, bi, bj, wantBi, wantBj)
		}
	}
}

// randomVec is k draws of N(0, 1).
func randomVec(rng *rand.Rand, k int) []float64 {
	v := make([]float64, k)
	gaussian(rng, v, 1)
	return v
}
