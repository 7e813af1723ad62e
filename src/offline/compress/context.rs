//! The compressor's context: the raw clip sampled in f64 at every frame and between frames,
//! the plan of which channels are stripped, packed and kept raw, and the blob's measurement.

use super::*;

/// Everything the compressor measures against: the raw clip sampled at every frame and between frames
/// between frames, in f64.
pub(super) struct Context<'a> {
    pub(super) skeleton: &'a Skeleton,
    pub(super) clip: &'a Clip,
    pub(super) settings: CompressionSettings,
    /// Frames per segment (the settings' or one of [`AUTO_SEGMENT_FRAMES`]).
    pub(super) segment_frames: u32,
    pub(super) n: usize,
    pub(super) frames: u32,
    pub(super) rate: f64,
    pub(super) parents: Vec<Option<usize>>,
    /// Per joint: itself and its descendants, parents first.
    pub(super) subtree: Vec<Vec<usize>>,
    /// Per joint: itself and its ancestors.
    pub(super) chain: Vec<Vec<usize>>,
    pub(super) threshold: f64,
    pub(super) shell: f64,
    /// The rotation bound ([`CompressionSettings::rotation_tolerance`]; infinite: none).
    pub(super) rotation_tolerance: f64,
    /// Per joint, where its skin matrix's translation is in its own space: its inverse bind
    /// matrix's translation.
    pub(super) skin_points: Vec<DVec3>,
    /// The skeleton's size (the largest side of its bind pose's box, at least `f64::MIN_POSITIVE`).
    pub(super) size: f64,
    /// The skin bound in units ([`CompressionSettings::skin_tolerance`] times the size; infinite:
    /// none).
    pub(super) skin_tolerance: f64,
    /// Raw local poses at every frame (`f · n + j`).
    pub(super) raw: Vec<TransformF64>,
    /// Raw model matrices at every frame.
    pub(super) raw_model: Vec<DAffine3>,
    /// Raw local poses a quarter of the way between frames ([`BETWEEN`]) `f` and `f + 1`.
    pub(super) mid: Vec<TransformF64>,
    /// Raw model matrices between frames.
    pub(super) mid_model: Vec<DAffine3>,
}

/// A channel's fate.
#[derive(Clone, Debug)]
pub(super) enum Stripped {
    /// Holds the rest pose (the channel is left out).
    Rest,
    /// Holds one value (a one-key track).
    Constant(DVec3, DQuat),
}

/// Which channels are stripped, packed and kept raw.
#[derive(Clone, Debug, Default)]
pub(super) struct Plan {
    pub(super) stripped: Vec<(u32, Channel, Stripped)>,
    pub(super) packed: Vec<PackedTrack>,
    pub(super) raw: Vec<(u32, Channel, String)>,
    /// Local poses at every frame with the stripped channels applied (the others raw).
    pub(super) base: Vec<TransformF64>,
}

/// A packed channel's samples: per frame the three stored values (a rotation's without the
/// component its segment drops).
#[derive(Clone, Debug)]
pub(super) struct PackedTrack {
    pub(super) joint: u32,
    pub(super) channel: Channel,
    pub(super) values: Vec<DVec3>,
    /// Per segment, the component a rotation drops (3, w, for the other channels).
    pub(super) dropped: Vec<u32>,
    /// Clip range: min and extent per component (f32, as stored).
    pub(super) min: [f32; 3],
    pub(super) extent: [f32; 3],
}

pub(super) const CHANNELS: [Channel; 3] = [Channel::Translation, Channel::Rotation, Channel::Scale];

pub(super) fn affine(p: &TransformF64) -> DAffine3 {
    DAffine3::from_scale_rotation_translation(p.scale, p.rotation, p.translation)
}

/// The distance the shell points of a joint move between `a` and `b`: the largest over its three
/// axis points at `shell` from the joint.
pub(super) fn shell_error(a: &DAffine3, b: &DAffine3, shell: f64) -> f64 {
    let dt = a.translation - b.translation;
    let dm = a.matrix3 - b.matrix3;
    (dm.x_axis * shell + dt)
        .length_squared()
        .max((dm.y_axis * shell + dt).length_squared())
        .max((dm.z_axis * shell + dt).length_squared())
        .sqrt()
}

/// The largest length of a row of the difference of two matrices' 3×3 parts: the largest error of
/// an element of `a`'s 3×3 part times any rotation `r` (row `i` of `(a − b) · r` is row `i` of
/// `a − b` turned by `r`), so it bounds a skin matrix's error as well as the joint's own (for a
/// rotation by a small angle θ it is at most θ).
pub(super) fn rotation_error(a: &DAffine3, b: &DAffine3) -> f64 {
    let d = (a.matrix3 - b.matrix3).transpose();
    d.x_axis
        .length_squared()
        .max(d.y_axis.length_squared())
        .max(d.z_axis.length_squared())
        .sqrt()
}

pub(super) fn xyz(p: &TransformF64, c: Channel) -> DVec3 {
    match c {
        Channel::Translation => p.translation,
        Channel::Rotation => {
            let q = if p.rotation.w < 0.0 { -p.rotation } else { p.rotation };
            DVec3::new(q.x, q.y, q.z)
        }
        Channel::Scale => p.scale,
    }
}

/// The component a rotation segment drops: w while it stays at least ½ (restoring it then loses
/// at most a factor √3 of the stored precision), else the one whose smallest magnitude over the
/// segment is largest.
pub(super) fn dropped_component(rotations: &[DQuat]) -> u32 {
    let smallest = |c: usize| {
        rotations
            .iter()
            .map(|q| q.to_array()[c].abs())
            .fold(f64::INFINITY, f64::min)
    };
    if smallest(3) >= 0.5 {
        return 3;
    }
    (0..4)
        .max_by(|&a, &b| smallest(a).total_cmp(&smallest(b)))
        .expect("four components") as u32
}

pub(super) fn set(p: &mut TransformF64, c: Channel, v: DVec3) {
    match c {
        Channel::Translation => p.translation = v,
        Channel::Rotation => p.rotation = rotation_from_stored(v, 3),
        Channel::Scale => p.scale = v,
    }
}

/// The model matrices of one frame's local poses.
pub(super) fn models(parents: &[Option<usize>], local: &[TransformF64], out: &mut [DAffine3]) {
    for (i, l) in local.iter().enumerate() {
        let m = affine(l);
        out[i] = match parents[i] {
            Some(p) => out[p] * m,
            None => m,
        };
    }
}

/// A component quantized to `width` bits in a segment range (lo, ex): (q, decoded value).
pub(super) fn quantize(v: f64, lo: f64, ex: f64, width: u32) -> (u32, f64) {
    if width == 0 {
        return (0, lo + ex * 0.5);
    }
    let top = f64::from((1u32 << width) - 1);
    let x = if ex > 0.0 { ((v - lo) / ex).clamp(0.0, 1.0) } else { 0.0 };
    let q = (x * top).round();
    (q as u32, lo + ex * (q / top))
}

impl Context<'_> {
    pub(super) fn new<'a>(
        skeleton: &'a Skeleton,
        clip: &'a Clip,
        settings: &CompressionSettings,
        segment_frames: u32,
        frames: u32,
        rate: f64,
    ) -> Context<'a> {
        let n = skeleton.joint_count();
        let parents: Vec<Option<usize>> = skeleton.parents().iter().map(|p| p.map(|p| p as usize)).collect();
        let mut subtree: Vec<Vec<usize>> = (0..n).map(|j| vec![j]).collect();
        let mut chain: Vec<Vec<usize>> = Vec::with_capacity(n);
        for j in 0..n {
            let mut c = vec![j];
            let mut p = parents[j];
            while let Some(a) = p {
                c.push(a);
                subtree[a].push(j);
                p = parents[a];
            }
            chain.push(c);
        }
        let sampler = ClipSampler::new(skeleton, clip);
        let sample_all = |times: &mut dyn Iterator<Item = f64>| {
            let mut local = Vec::new();
            let mut model = Vec::new();
            let mut m = vec![DAffine3::IDENTITY; n];
            for t in times {
                let pose = sampler.sample(t);
                models(&parents, &pose, &mut m);
                local.extend(pose);
                model.extend_from_slice(&m);
            }
            (local, model)
        };
        let binds = skeleton.inverse_binds();
        let skin_points: Vec<DVec3> = binds.iter().map(|b| b.w_axis.truncate().as_dvec3()).collect();
        let (lo, hi) = binds
            .iter()
            .map(|b| b.as_dmat4().inverse().w_axis.truncate())
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p), hi.max(p))
            });
        let size = (hi - lo).max_element().max(f64::MIN_POSITIVE);
        let times = frame_times(clip, frames, rate);
        let (raw, raw_model) = sample_all(&mut times.iter().copied());
        let (mid, mid_model) = sample_all(&mut times.windows(2).map(|w| w[0] + BETWEEN * (w[1] - w[0])));
        Context {
            skeleton,
            clip,
            settings: *settings,
            segment_frames,
            n,
            frames,
            rate,
            parents,
            subtree,
            chain,
            threshold: settings.threshold_cm / settings.unit_cm,
            shell: settings.shell_cm / settings.unit_cm,
            rotation_tolerance: if settings.rotation_tolerance > 0.0 {
                settings.rotation_tolerance
            } else {
                f64::INFINITY
            },
            skin_points,
            size,
            skin_tolerance: if settings.skin_tolerance > 0.0 && size > f64::MIN_POSITIVE {
                settings.skin_tolerance * size
            } else {
                f64::INFINITY
            },
            raw,
            raw_model,
            mid,
            mid_model,
        }
    }

    /// Joint `j`'s error against the three bounds, as a fraction of them (within: at most 1).
    pub(super) fn error(&self, j: usize, reference: &DAffine3, got: &DAffine3) -> f64 {
        (shell_error(reference, got, self.shell) / self.threshold)
            .max(rotation_error(reference, got) / self.rotation_tolerance)
            .max(self.skin_error(j, reference, got) / self.skin_tolerance)
    }

    /// How far joint `j`'s skin matrix's translation is from the reference's, in units.
    pub(super) fn skin_error(&self, j: usize, reference: &DAffine3, got: &DAffine3) -> f64 {
        let p = self.skin_points[j];
        reference.transform_point3(p).distance(got.transform_point3(p))
    }

    /// The largest error ([`Context::error`]) over joint `j`'s subtree at the poses `local` (`row · n + j'`, rows
    /// matching `reference`), with joint `j`'s pose replaced by `pose(row)`.
    pub(super) fn subtree_error(
        &self,
        local: &[TransformF64],
        model: &[DAffine3],
        reference: &[DAffine3],
        j: usize,
        pose: &dyn Fn(usize) -> TransformF64,
    ) -> f64 {
        let n = self.n;
        let mut worst: f64 = 0.0;
        let mut m = vec![DAffine3::IDENTITY; n];
        for row in 0..local.len() / n {
            let base = row * n;
            m.copy_from_slice(&model[base..base + n]);
            let pj = affine(&pose(row));
            m[j] = match self.parents[j] {
                Some(p) => m[p] * pj,
                None => pj,
            };
            for &i in &self.subtree[j][1..] {
                let p = self.parents[i].expect("a descendant has a parent");
                m[i] = m[p] * affine(&local[base + i]);
            }
            for &i in &self.subtree[j] {
                worst = worst.max(self.error(i, &reference[base + i], &m[i]));
            }
        }
        worst
    }

    /// Decides each channel: stripped (rest or constant), packed, or raw.
    pub(super) fn plan_channels(&self) -> Plan {
        let n = self.n;
        let mut plan = Plan {
            base: self.raw.clone(),
            ..Plan::default()
        };
        let mut model = self.raw_model.clone();
        let rest = self.skeleton.rest_pose();
        let mut by_joint: Vec<&JointTrack> = self.clip.tracks.iter().collect();
        by_joint.sort_by_key(|t| self.skeleton.joint_index(&t.joint));
        for jt in by_joint {
            let j = self.skeleton.joint_index(&jt.joint).expect("a validated clip");
            for c in CHANNELS {
                if !jt.has(c) {
                    continue;
                }
                let values: Vec<DVec3> = (0..self.frames as usize)
                    .map(|f| xyz(&plan.base[f * n + j], c))
                    .collect();
                // Stripped: at the rest pose, or at the middle of its range.
                let r = &rest[j];
                let rest_value = TransformF64::from_transform(r);
                let (lo, hi) = bounds(&values);
                if self.strip(&mut plan, &mut model, j, c, rest_value, (lo + hi) * 0.5) {
                    continue;
                }
                // Kept raw when linear interpolation between frames strays from it.
                let sampling = self.sampling_error(&plan, j, c, &values);
                if sampling > SAMPLING_BUDGET {
                    plan.raw.push((
                        j as u32,
                        c,
                        format!("between frames it strays {sampling:.2} times the error allowed from a line"),
                    ));
                    continue;
                }
                let track = self.packed_track(&plan, j, c, values, lo, hi);
                plan.packed.push(track);
            }
        }
        plan
    }

    /// Strips channel `c` of joint `j` when holding it at the rest pose (`rest_value`), or else
    /// at `middle` (the middle of its range), keeps its subtree within [`STRIP_BUDGET`]: the
    /// plan's base poses and `model` (the model matrices of those) then hold it there. Whether
    /// it did.
    fn strip(
        &self,
        plan: &mut Plan,
        model: &mut [DAffine3],
        j: usize,
        c: Channel,
        rest_value: TransformF64,
        middle: DVec3,
    ) -> bool {
        let n = self.n;
        let mut middle_value = rest_value;
        set(&mut middle_value, c, middle);
        // As stored: a one-key f32 track (the rotation normalized when sampled).
        middle_value.translation = middle_value.translation.as_vec3().as_dvec3();
        middle_value.rotation = middle_value.rotation.as_quat().as_dquat().normalize();
        middle_value.scale = middle_value.scale.as_vec3().as_dvec3();
        for (option, candidate) in [(true, rest_value), (false, middle_value)] {
            let pose = |row: usize| {
                let mut p = plan.base[row * n + j];
                match c {
                    Channel::Translation => p.translation = candidate.translation,
                    Channel::Rotation => p.rotation = candidate.rotation,
                    Channel::Scale => p.scale = candidate.scale,
                }
                p
            };
            if self.subtree_error(&plan.base, model, &self.raw_model, j, &pose) <= STRIP_BUDGET {
                let poses: Vec<TransformF64> = (0..self.frames as usize).map(pose).collect();
                for (f, p) in poses.into_iter().enumerate() {
                    plan.base[f * n + j] = p;
                }
                for f in 0..self.frames as usize {
                    models(
                        &self.parents,
                        &plan.base[f * n..(f + 1) * n],
                        &mut model[f * n..(f + 1) * n],
                    );
                }
                let s = match (option, c) {
                    (true, _) => Stripped::Rest,
                    (false, Channel::Rotation) => Stripped::Constant(DVec3::ZERO, candidate.rotation),
                    (false, Channel::Translation) => Stripped::Constant(candidate.translation, DQuat::IDENTITY),
                    (false, Channel::Scale) => Stripped::Constant(candidate.scale, DQuat::IDENTITY),
                };
                plan.stripped.push((j as u32, c, s));
                return true;
            }
        }
        false
    }

    /// How far linear interpolation between the frames of channel `c` of joint `j` (`values`,
    /// one per frame; rotations from the plan's base poses) strays from the raw clip between
    /// frames, over the joint's subtree, as a fraction of the error allowed.
    fn sampling_error(&self, plan: &Plan, j: usize, c: Channel, values: &[DVec3]) -> f64 {
        let n = self.n;
        let pose = |row: usize| {
            let mut p = self.mid[row * n + j];
            let (a, b) = (values[row], values[row + 1]);
            match c {
                Channel::Rotation => {
                    let (qa, qb) = (plan.base[row * n + j].rotation, plan.base[(row + 1) * n + j].rotation);
                    p.rotation = slerp(qa, qb, BETWEEN);
                }
                _ => set(&mut p, c, a.lerp(b, BETWEEN)),
            }
            p
        };
        self.subtree_error(&self.mid, &self.mid_model, &self.mid_model, j, &pose)
    }

    /// Channel `c` of joint `j` as packed: its stored values (`values`, within `lo..hi`, for
    /// translation and scale; a rotation's from the plan's base poses, without the component
    /// its segment drops) and their f32 range.
    fn packed_track(&self, plan: &Plan, j: usize, c: Channel, values: Vec<DVec3>, lo: DVec3, hi: DVec3) -> PackedTrack {
        let n = self.n;
        let (values, dropped, lo, hi) = if c == Channel::Rotation {
            let rotations: Vec<DQuat> = (0..self.frames as usize)
                .map(|f| plan.base[f * n + j].rotation)
                .collect();
            let s_frames = self.segment_frames as usize;
            let dropped: Vec<u32> = rotations.chunks(s_frames).map(dropped_component).collect();
            let values: Vec<DVec3> = rotations
                .iter()
                .enumerate()
                .map(|(f, q)| stored_of_rotation(*q, dropped[f / s_frames]))
                .collect();
            let (lo, hi) = bounds(&values);
            // Room for compensation ([`Segment::compensate`]) to move a value past the
            // reference's range by an ancestor's error (a hinge's constant 0 becomes a
            // little off 0); at coarse bounds no more than a hundredth.
            let room = DVec3::splat((2.0 * self.rotation_tolerance.min(self.threshold / self.shell)).min(1e-2));
            (values, dropped, lo - room, hi + room)
        } else {
            (
                values,
                vec![3; (self.frames as usize).div_ceil(self.segment_frames as usize)],
                lo,
                hi,
            )
        };
        let (min, extent) = f32_range(lo, hi);
        PackedTrack {
            joint: j as u32,
            channel: c,
            values,
            dropped,
            min,
            extent,
        }
    }

    /// Chooses every segment's widths and writes the blob; the errors at every frame and
    /// between frames. `Err(k)`: packed track `k` has a component no width holds.
    pub(super) fn allocate(&self, plan: &Plan) -> std::result::Result<(Vec<u32>, Errors), usize> {
        if plan.packed.is_empty() {
            let errors = self.measure(plan, None);
            return Ok((Vec::new(), errors));
        }
        let s_frames = self.segment_frames as usize;
        let segment_count = (self.frames as usize).div_ceil(s_frames);
        let mut widths: Vec<Vec<[u32; 3]>> = Vec::with_capacity(segment_count);
        let mut values: Vec<Vec<Vec<DVec3>>> = Vec::with_capacity(segment_count);
        for s in 0..segment_count {
            let mut seg = Segment::new(
                self,
                plan,
                s * s_frames,
                s_frames.min(self.frames as usize - s * s_frames),
            );
            widths.push(seg.allocate(plan)?);
            values.push(seg.values);
        }
        // Verify the blob as decoded, a quarter of the way between frames ([`BETWEEN`]) included; raise the widths of
        // the segments where a joint is over the threshold along its chain, until none is.
        for _ in 0..8 {
            let blob = self.write(plan, &widths, &values);
            let errors = self.measure(plan, Some(&blob));
            if errors.over.is_empty() {
                return Ok((blob, errors));
            }
            // Each segment's tracks on an over joint's chain go up one bit, once a round.
            let mut raise = vec![vec![false; plan.packed.len()]; segment_count];
            for &(f, j) in &errors.over {
                for s in [f / s_frames, (f + 1).min(self.frames as usize - 1) / s_frames] {
                    for (k, t) in plan.packed.iter().enumerate() {
                        raise[s][k] |= self.chain[j].contains(&(t.joint as usize));
                    }
                }
            }
            for (widths, raise) in widths.iter_mut().zip(&raise) {
                for (w, _) in widths.iter_mut().zip(raise).filter(|(_, r)| **r) {
                    *w = w.map(|w| (w + 1).min(MAX_WIDTH));
                }
            }
            let raised: Vec<bool> = raise.iter().map(|r| r.contains(&true)).collect();
            // The raised parents decode differently: compensate their children again.
            for s in (0..segment_count).filter(|&s| raised[s]) {
                let mut seg = Segment::new(
                    self,
                    plan,
                    s * s_frames,
                    s_frames.min(self.frames as usize - s * s_frames),
                );
                for (k, t) in plan.packed.iter().enumerate() {
                    seg.commit(t, k, widths[s][k]);
                }
                seg.compensate(plan, &widths[s], None);
                values[s] = seg.values;
            }
        }
        let blob = self.write(plan, &widths, &values);
        let errors = self.measure(plan, Some(&blob));
        Ok((blob, errors))
    }

    /// The blob of these widths and stored values (per segment, per packed track, per row).
    pub(super) fn write(&self, plan: &Plan, widths: &[Vec<[u32; 3]>], values: &[Vec<Vec<DVec3>>]) -> Vec<u32> {
        let s_frames = self.segment_frames as usize;
        let writer = Writer {
            frame_count: self.frames,
            rate: self.rate as f32,
            segment_frames: self.segment_frames,
            ranges: plan
                .packed
                .iter()
                .map(|t| [t.min[0], t.min[1], t.min[2], t.extent[0], t.extent[1], t.extent[2]])
                .collect(),
        };
        let segments: Vec<Vec<SegmentTrack>> = widths
            .iter()
            .enumerate()
            .map(|(s, w)| {
                let first = s * s_frames;
                let rows = s_frames.min(self.frames as usize - first);
                plan.packed
                    .iter()
                    .zip(w)
                    .zip(&values[s])
                    .map(|((t, &widths), v)| {
                        let ranges = segment_ranges(t, v);
                        SegmentTrack {
                            widths,
                            dropped: t.dropped[s],
                            min: ranges.map(|r| r.0),
                            extent: ranges.map(|r| r.1),
                            q: v[..rows]
                                .iter()
                                .map(|x| std::array::from_fn(|c| quantize(x[c], ranges[c].2, ranges[c].3, widths[c]).0))
                                .collect(),
                        }
                    })
                    .collect()
            })
            .collect();
        writer.write(&segments)
    }

    /// Errors of the decoded clip (the plan's base with the blob's tracks) at every frame and
    /// a quarter of the way between frames ([`BETWEEN`]).
    pub(super) fn measure(&self, plan: &Plan, blob: Option<&[u32]>) -> Errors {
        let n = self.n;
        let blob = blob.map(|b| Blob::parse(b).expect("the compressor's own blob"));
        let mut errors = Errors::default();
        let mut m = vec![DAffine3::IDENTITY; n];
        let frames = self.frames as usize;
        for step in 0..2 * frames - 1 {
            let (f, half) = (step / 2, step % 2 == 1);
            let t = (f as f64 + if half { BETWEEN } else { 0.0 }) / self.rate;
            let mut pose: Vec<TransformF64> = if half {
                // Stripped channels hold their value; the others raw.
                let mut p = self.mid[f * n..(f + 1) * n].to_vec();
                for &(j, c, _) in &plan.stripped {
                    let from = &plan.base[f * n + j as usize];
                    match c {
                        Channel::Translation => p[j as usize].translation = from.translation,
                        Channel::Rotation => p[j as usize].rotation = from.rotation,
                        Channel::Scale => p[j as usize].scale = from.scale,
                    }
                }
                p
            } else {
                plan.base[f * n..(f + 1) * n].to_vec()
            };
            if let Some(blob) = &blob {
                apply_packed(blob, plan.packed.iter().map(|tr| (tr.joint, tr.channel)), t, &mut pose);
            }
            models(&self.parents, &pose, &mut m);
            let reference = if half {
                &self.mid_model[f * n..(f + 1) * n]
            } else {
                &self.raw_model[f * n..(f + 1) * n]
            };
            for j in 0..n {
                let e = shell_error(&reference[j], &m[j], self.shell);
                errors.all.push(e);
                if e > errors.max {
                    errors.max = e;
                    errors.max_joint = j;
                    errors.max_time = t;
                }
                errors.max_rotation = errors.max_rotation.max(rotation_error(&reference[j], &m[j]));
                errors.max_skin = errors
                    .max_skin
                    .max(self.skin_error(j, &reference[j], &m[j]) / self.size);
                if self.error(j, &reference[j], &m[j]) > 1.0 {
                    errors.over.push((f, j));
                }
            }
        }
        errors
    }

    pub(super) fn output(&self, plan: &Plan, blob: Vec<u32>) -> CompressedClip {
        let names = self.skeleton.joint_names();
        let mut tracks: Vec<JointTrack> = Vec::new();
        fn track_of(tracks: &mut Vec<JointTrack>, names: &[String], j: u32) -> usize {
            let name = &names[j as usize];
            if let Some(k) = tracks.iter().position(|t| t.joint == *name) {
                return k;
            }
            tracks.push(JointTrack {
                joint: name.clone(),
                ..JointTrack::default()
            });
            tracks.len() - 1
        }
        for (j, c, s) in &plan.stripped {
            let Stripped::Constant(v, q) = s else {
                continue;
            };
            let k = track_of(&mut tracks, names, *j);
            match c {
                Channel::Translation => tracks[k].translation = Some(Track::constant(v.as_vec3())),
                Channel::Rotation => tracks[k].rotation = Some(Track::constant(q.as_quat())),
                Channel::Scale => tracks[k].scale = Some(Track::constant(v.as_vec3())),
            }
        }
        for (j, c, _) in &plan.raw {
            let source = self
                .clip
                .tracks
                .iter()
                .find(|t| self.skeleton.joint_index(&t.joint) == Some(*j as usize))
                .expect("a raw channel comes from a track");
            let k = track_of(&mut tracks, names, *j);
            match c {
                Channel::Translation => tracks[k].translation.clone_from(&source.translation),
                Channel::Rotation => tracks[k].rotation.clone_from(&source.rotation),
                Channel::Scale => tracks[k].scale.clone_from(&source.scale),
            }
        }
        tracks.sort_by_key(|t| self.skeleton.joint_index(&t.joint));
        CompressedClip {
            clip: Clip {
                tracks,
                ..self.clip.clone()
            },
            packed: plan
                .packed
                .iter()
                .map(|t| PackedChannel {
                    joint: t.joint,
                    channel: t.channel,
                })
                .collect(),
            blob,
        }
    }

    pub(super) fn report(&self, plan: &Plan, compressed: &CompressedClip, errors: &Errors, seconds: f64) -> ClipReport {
        let names = self.skeleton.joint_names();
        let mut sorted = errors.all.clone();
        sorted.sort_by(f64::total_cmp);
        let p99 = sorted
            .get(((sorted.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0);
        let unit = self.settings.unit_cm;
        let mean = errors.all.iter().sum::<f64>() / errors.all.len().max(1) as f64;
        let blob_bytes = Blob::parse(&compressed.blob).map_or_else(|_| format::BlobBytes::default(), |b| b.bytes());
        ClipReport {
            clip: self.clip.name.clone(),
            joints: self.n,
            animated_tracks: plan.packed.len() + plan.raw.len(),
            packed_tracks: plan.packed.len(),
            constant_tracks: plan.stripped.len(),
            raw_tracks: plan
                .raw
                .iter()
                .map(|(j, c, why)| format!("{} {c}: {why}", names[*j as usize]))
                .collect(),
            samples: self.frames,
            sample_rate: self.rate,
            segment_frames: self.segment_frames,
            raw_bytes: 40 * self.n * self.frames as usize,
            compressed_bytes: gpu_bytes(self.n, compressed),
            blob_bytes,
            max_error_cm: errors.max * unit,
            p99_error_cm: p99 * unit,
            mean_error_cm: mean * unit,
            max_error_joint: names[errors.max_joint].clone(),
            max_error_time: errors.max_time,
            max_rotation_error: errors.max_rotation,
            max_skin_error: errors.max_skin,
            seconds,
        }
    }
}

/// A packed track's segment range over a segment's `values`: per component (m, e, lo, ex).
pub(super) fn segment_ranges(t: &PackedTrack, values: &[DVec3]) -> [(u32, u32, f64, f64); 3] {
    std::array::from_fn(|c| {
        let (min, extent) = (f64::from(t.min[c]), f64::from(t.extent[c]));
        let (m, e) = if extent > 0.0 {
            let steps = f64::from(RANGE_STEPS);
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for v in values {
                let x = (v[c] - min) / extent;
                lo = lo.min(x);
                hi = hi.max(x);
            }
            let m = (lo * steps).floor().clamp(0.0, steps) as u32;
            let top = (hi * steps).ceil().clamp(0.0, steps) as u32;
            (m, top.saturating_sub(m))
        } else {
            (0, 0)
        };
        let (lo, ex) = segment_range_f64(min, extent, m, e);
        (m, e, lo, ex)
    })
}

/// Errors of a decoded clip.
#[derive(Default)]
pub(super) struct Errors {
    /// Every joint's error at every frame and a quarter of the way between frames ([`BETWEEN`]).
    pub(super) all: Vec<f64>,
    pub(super) max: f64,
    pub(super) max_joint: usize,
    pub(super) max_time: f64,
    /// Largest rotation error ([`rotation_error`]).
    pub(super) max_rotation: f64,
    /// Largest skin error ([`Context::skin_error`]), as a fraction of the skeleton's size.
    pub(super) max_skin: f64,
    /// (frame, joint) over the threshold.
    pub(super) over: Vec<(usize, usize)>,
}

// Stripping may take a tenth of the error allowed, interpolation between frames 90 % (with keys
// on the frames it takes none, but f32 key times stray a little), the rest is quantization's.
/// The share of the error allowed that stripping a channel may take.
const STRIP_BUDGET: f64 = 0.1;
/// The share of the error allowed that linear interpolation between frames may take.
const SAMPLING_BUDGET: f64 = 0.9;

/// The smallest and largest of `values`, per component.
fn bounds(values: &[DVec3]) -> (DVec3, DVec3) {
    values.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), v| (lo.min(*v), hi.max(*v)),
    )
}

/// f32 bounds that contain every value of `lo..hi`: min and extent per component.
fn f32_range(lo: DVec3, hi: DVec3) -> ([f32; 3], [f32; 3]) {
    let mut min = [0.0f32; 3];
    let mut extent = [0.0f32; 3];
    for k in 0..3 {
        // f32 bounds that contain every value.
        let mut m = lo[k] as f32;
        if f64::from(m) > lo[k] {
            m = m.next_down();
        }
        let mut e = (hi[k] - f64::from(m)) as f32;
        if f64::from(m) + f64::from(e) < hi[k] {
            e = e.next_up();
        }
        min[k] = m;
        extent[k] = e;
    }
    (min, extent)
}
