//! One segment of frames during bit allocation: widths raised along the worst chain, lowered
//! where the bound still holds, rotations compensated against their decoded parents.

use super::context::*;
use super::*;

/// One segment's state during bit allocation.
pub(super) struct Segment<'c, 'a> {
    pub(super) ctx: &'c Context<'a>,
    pub(super) first: usize,
    pub(super) rows: usize,
    /// Local poses of the segment's frames (`row · n + j`).
    pub(super) local: Vec<TransformF64>,
    pub(super) model: Vec<DAffine3>,
    /// Per packed track: segment range (m, e) per component and the decoded (lo, ex).
    pub(super) ranges: Vec<[(u32, u32, f64, f64); 3]>,
    /// Per packed track, per row: the stored values to quantize. A rotation's are compensated:
    /// the reference's object-space rotation under its decoded parent, so that its error is its
    /// own quantization's and not its ancestors' too ([`Segment::compensate`]).
    pub(super) values: Vec<Vec<DVec3>>,
    /// Per joint: whether its rotation is packed (and so compensated).
    pub(super) compensated: Vec<bool>,
}

impl<'c, 'a> Segment<'c, 'a> {
    pub(super) fn new(ctx: &'c Context<'a>, plan: &Plan, first: usize, rows: usize) -> Self {
        let n = ctx.n;
        let local = plan.base[first * n..(first + rows) * n].to_vec();
        let mut model = vec![DAffine3::IDENTITY; rows * n];
        for r in 0..rows {
            models(&ctx.parents, &local[r * n..(r + 1) * n], &mut model[r * n..(r + 1) * n]);
        }
        let values: Vec<Vec<DVec3>> = plan
            .packed
            .iter()
            .map(|t| t.values[first..first + rows].to_vec())
            .collect();
        let ranges = plan
            .packed
            .iter()
            .zip(&values)
            .map(|(t, v)| segment_ranges(t, v))
            .collect();
        let mut compensated = vec![false; n];
        for t in &plan.packed {
            if t.channel == Channel::Rotation {
                compensated[t.joint as usize] = true;
            }
        }
        Self {
            ctx,
            first,
            rows,
            local,
            model,
            ranges,
            values,
            compensated,
        }
    }

    /// Recomputes the stored values of the packed rotations below joint `root` (every one when
    /// `None`), parents first, as the reference's object-space rotation under the parent as
    /// decoded: local = decoded parent⁻¹ · reference parent · reference local. Each is quantized
    /// again at its widths before its children read it.
    pub(super) fn compensate(&mut self, plan: &Plan, widths: &[[u32; 3]], root: Option<usize>) {
        let n = self.ctx.n;
        let s = self.first / self.ctx.segment_frames as usize;
        for (k, t) in plan.packed.iter().enumerate() {
            let j = t.joint as usize;
            if t.channel != Channel::Rotation || root.is_some_and(|a| a == j || !self.ctx.subtree[a].contains(&j)) {
                continue;
            }
            let Some(p) = self.ctx.parents[j] else {
                continue;
            };
            for r in 0..self.rows {
                let (_, decoded, _) = self.model[r * n + p].to_scale_rotation_translation();
                let (_, reference, _) = self.ctx.raw_model[(self.first + r) * n + p].to_scale_rotation_translation();
                let local = plan.base[(self.first + r) * n + j].rotation;
                let target = (decoded.inverse() * reference * local).normalize();
                self.values[k][r] = stored_of_rotation(target, t.dropped[s]);
            }
            self.ranges[k] = segment_ranges(t, &self.values[k]);
            self.commit(t, k, widths[k]);
        }
    }

    /// Joint `j`'s model matrix at row `r` when joint `changed`'s model matrix becomes `m` and
    /// the packed rotations between them keep their object-space rotation (compensated), the
    /// others their local pose.
    pub(super) fn model_below(&self, r: usize, changed: usize, m: DAffine3, j: usize) -> DAffine3 {
        let n = self.ctx.n;
        let mut model = m;
        for &a in self.ctx.chain[j].iter().rev().skip_while(|&&a| a != changed).skip(1) {
            let local = &self.local[r * n + a];
            model = if self.compensated[a] {
                let mut kept = self.model[r * n + a];
                kept.translation = model.transform_point3(local.translation);
                kept
            } else {
                model * affine(local)
            };
        }
        model
    }

    /// Packed track `k` at row `r` with these widths (`None`: exact).
    pub(super) fn decoded(&self, k: usize, r: usize, widths: [Option<u32>; 3]) -> DVec3 {
        let v = self.values[k][r];
        DVec3::from_array(std::array::from_fn(|c| match widths[c] {
            None => v[c],
            Some(w) => quantize(v[c], self.ranges[k][c].2, self.ranges[k][c].3, w).1,
        }))
    }

    pub(super) fn pose(&self, t: &PackedTrack, k: usize, r: usize, widths: [Option<u32>; 3]) -> TransformF64 {
        let mut p = self.local[r * self.ctx.n + t.joint as usize];
        let v = self.decoded(k, r, widths);
        match t.channel {
            Channel::Rotation => {
                let s = self.first / self.ctx.segment_frames as usize;
                p.rotation = rotation_from_stored(v, t.dropped[s]);
            }
            c => set(&mut p, c, v),
        }
        p
    }

    /// Track `k`'s joint's model matrix at row `r` with these widths.
    pub(super) fn model_with(&self, t: &PackedTrack, k: usize, r: usize, widths: [Option<u32>; 3]) -> DAffine3 {
        let j = t.joint as usize;
        let m = affine(&self.pose(t, k, r, widths));
        match self.ctx.parents[j] {
            Some(p) => self.model[r * self.ctx.n + p] * m,
            None => m,
        }
    }

    /// The largest error over track `k`'s joint's subtree with these widths, the packed
    /// rotations below compensated ([`Segment::model_below`]).
    pub(super) fn error(&self, t: &PackedTrack, k: usize, widths: [Option<u32>; 3]) -> f64 {
        let n = self.ctx.n;
        let j = t.joint as usize;
        let mut worst: f64 = 0.0;
        for r in 0..self.rows {
            let m = self.model_with(t, k, r, widths);
            for &i in &self.ctx.subtree[j] {
                let got = self.model_below(r, j, m, i);
                worst = worst.max(self.ctx.error(i, &self.ctx.raw_model[(self.first + r) * n + i], &got));
            }
        }
        worst
    }

    /// Joint `j`'s error with track `k` (on its chain) at these widths, the packed rotations
    /// between them compensated.
    pub(super) fn joint_error(&self, j: usize, t: &PackedTrack, k: usize, widths: [u32; 3]) -> f64 {
        let n = self.ctx.n;
        let mut worst: f64 = 0.0;
        for r in 0..self.rows {
            let m = self.model_with(t, k, r, widths.map(Some));
            let got = self.model_below(r, t.joint as usize, m, j);
            worst = worst.max(self.ctx.error(j, &self.ctx.raw_model[(self.first + r) * n + j], &got));
        }
        worst
    }

    /// Sets track `k` to these widths.
    pub(super) fn commit(&mut self, t: &PackedTrack, k: usize, widths: [u32; 3]) {
        let n = self.ctx.n;
        for r in 0..self.rows {
            let p = self.pose(t, k, r, widths.map(Some));
            self.local[r * n + t.joint as usize] = p;
            models(
                &self.ctx.parents,
                &self.local[r * n..(r + 1) * n],
                &mut self.model[r * n..(r + 1) * n],
            );
        }
    }

    pub(super) fn joint_errors(&self) -> Vec<f64> {
        let n = self.ctx.n;
        let mut e = vec![0.0f64; n];
        for r in 0..self.rows {
            for (j, e) in e.iter_mut().enumerate() {
                let i = (self.first + r) * n + j;
                *e = e.max(self.ctx.error(j, &self.ctx.raw_model[i], &self.model[r * n + j]));
            }
        }
        e
    }

    pub(super) fn allocate(&mut self, plan: &Plan) -> std::result::Result<Vec<[u32; 3]>, usize> {
        let threshold = ALLOCATION_TARGET;
        // 1. The least width of each component alone, the rest exact.
        let mut widths: Vec<[u32; 3]> = Vec::with_capacity(plan.packed.len());
        for (k, t) in plan.packed.iter().enumerate() {
            let mut w = [0u32; 3];
            for c in 0..3 {
                let with = |b: u32| {
                    let mut ws = [None; 3];
                    ws[c] = Some(b);
                    self.error(t, k, ws)
                };
                if with(MAX_WIDTH) > threshold {
                    return Err(k);
                }
                let (mut lo, mut hi) = (0, MAX_WIDTH);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if with(mid) <= threshold {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                w[c] = lo;
            }
            widths.push(w);
        }
        // 2. All together, the rotations compensated: raise the worst joint's chain until every
        // joint is within.
        for (k, t) in plan.packed.iter().enumerate() {
            self.commit(t, k, widths[k]);
        }
        self.compensate(plan, &widths, None);
        self.raise_worst(plan, &mut widths);
        // 3. Lower each component while every joint stays within, widest first.
        let mut order: Vec<(usize, usize)> = (0..plan.packed.len())
            .flat_map(|k| (0..3).map(move |c| (k, c)))
            .collect();
        for _ in 0..3 {
            order.sort_by_key(|&(k, c)| std::cmp::Reverse(widths[k][c]));
            let mut changed = false;
            for &(k, c) in &order {
                if widths[k][c] == 0 {
                    continue;
                }
                let mut w = widths[k][c];
                while w > 0 {
                    let mut trial = widths[k];
                    trial[c] = w - 1;
                    if self.error(&plan.packed[k], k, trial.map(Some)) > threshold {
                        break;
                    }
                    w -= 1;
                }
                if w != widths[k][c] {
                    widths[k][c] = w;
                    self.commit(&plan.packed[k], k, widths[k]);
                    self.compensate(plan, &widths, Some(plan.packed[k].joint as usize));
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // 4. Compensation moved the rotations below each lowered one: raise again where that
        // took a joint over.
        self.raise_worst(plan, &mut widths);
        Ok(widths)
    }

    /// Raises, one component at a time, the widths along the worst joint's chain until every
    /// joint is within the bounds (or no width is left to raise).
    pub(super) fn raise_worst(&mut self, plan: &Plan, widths: &mut [[u32; 3]]) {
        // Joints no single extra bit helps (an ancestor's error its compensation cannot follow):
        // left to the blob's check, which raises whole chains.
        let mut stuck = vec![false; self.ctx.n];
        for _ in 0..3 * MAX_WIDTH as usize * plan.packed.len() + self.ctx.n {
            let errors = self.joint_errors();
            let (worst, e) = errors
                .iter()
                .enumerate()
                .filter(|&(j, _)| !stuck[j])
                .fold((0, 0.0f64), |a, (j, &e)| if e > a.1 { (j, e) } else { a });
            if e <= ALLOCATION_TARGET {
                break;
            }
            // The one component along its chain whose extra bit helps it most.
            let mut best: Option<(usize, [u32; 3], f64)> = None;
            for (k, t) in plan.packed.iter().enumerate() {
                if !self.ctx.chain[worst].contains(&(t.joint as usize)) {
                    continue;
                }
                for c in 0..3 {
                    if widths[k][c] == MAX_WIDTH || t.extent[c] == 0.0 {
                        continue;
                    }
                    let mut trial = widths[k];
                    trial[c] += 1;
                    let e = self.joint_error(worst, t, k, trial);
                    if best.is_none_or(|b| e < b.2) {
                        best = Some((k, trial, e));
                    }
                }
            }
            match best {
                Some((k, trial, predicted)) if predicted < e => {
                    widths[k] = trial;
                    self.commit(&plan.packed[k], k, trial);
                    self.compensate(plan, widths, Some(plan.packed[k].joint as usize));
                }
                _ => stuck[worst] = true,
            }
        }
    }
}
