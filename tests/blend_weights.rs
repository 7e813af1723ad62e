//! Blend-space weights on the CPU (`blend::node_child_weights`, the mirror of the WGSL function) and
//! the validating blend-tree builder.

use glam::{Vec2, Vec4};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use wgpu_anim::blend::{Blend2DKind, BlendLibrary, BlendNode, BlendTree, BlendTreeId, ClipCatalog};
use wgpu_anim::cpu::node_child_weights;
use wgpu_anim::layout::node_kind;
use wgpu_anim::{AnimationLibrary, Clip, ClipId, LibraryBuilder, Skeleton, Transform};

const SQ: [Vec2; 5] = [
    Vec2::new(-1.0, -1.0),
    Vec2::new(1.0, -1.0),
    Vec2::new(-1.0, 1.0),
    Vec2::new(1.0, 1.0),
    Vec2::ZERO,
];

/// Skeleton "a" with 16 clips `a0..a15` (clip ids 0..16) and skeleton "b" with one clip (id 16),
/// built once so that its clip ids hold for every tree of the tests.
fn clips() -> &'static AnimationLibrary {
    static LIBRARY: std::sync::OnceLock<AnimationLibrary> = std::sync::OnceLock::new();
    LIBRARY.get_or_init(build_clips)
}

/// Clip `k` of [`clips`].
fn clip(k: u32) -> ClipId {
    clips().clip_at(k).expect("a clip of the test library")
}

fn build_clips() -> AnimationLibrary {
    let mut b = LibraryBuilder::new();
    for name in ["a", "b"] {
        let s = b.add_skeleton(
            Skeleton::from_rest_pose(name, vec![(format!("{name}_root"), None, Transform::IDENTITY)]).unwrap(),
        );
        for k in 0..if name == "a" { 16 } else { 1 } {
            let clip = Clip {
                morph_weights: Vec::new(),
                events: Vec::new(),
                curves: Vec::new(),
                name: format!("{name}{k}"),
                duration: 1.0,
                looping: true,
                tracks: vec![],
            };
            b.add_clip(s, &clip).unwrap();
        }
    }
    b.build()
}

/// A tree whose root (node 0) blends clip `k` at child `k`.
fn tree_2d(kind: Blend2DKind, positions: &[Vec2]) -> BlendTree {
    let mut nodes = vec![BlendNode::Blend2D {
        kind,
        parameters: [0, 1],
        children: positions.iter().enumerate().map(|(k, &p)| (p, k + 1)).collect(),
    }];
    nodes.extend((0..positions.len()).map(|k| BlendNode::Clip(clip(k as u32))));
    BlendTree {
        name: format!("{kind:?}"),
        nodes,
        root: 0,
    }
}

fn tree_1d(thresholds: &[f32]) -> BlendTree {
    let mut nodes = vec![BlendNode::Blend1D {
        parameter: 2,
        children: thresholds.iter().enumerate().map(|(k, &t)| (t, k + 1)).collect(),
    }];
    nodes.extend((0..thresholds.len()).map(|k| BlendNode::Clip(clip(k as u32))));
    BlendTree {
        name: "1d".into(),
        nodes,
        root: 0,
    }
}

/// Adds `tree` to `lib`, checked against the clips of `clips`.
fn add(lib: &mut BlendLibrary, clips: &AnimationLibrary, tree: &BlendTree) -> wgpu_anim::Result<BlendTreeId> {
    let names: Vec<&str> = clips.skeletons().iter().map(|s| s.name()).collect();
    let catalog = ClipCatalog {
        library: clips.tag(),
        clips: clips.clips(),
        clip_names: clips.clip_names(),
        skeleton_names: &names,
    };
    lib.add_tree(&catalog, tree)
}

fn build(tree: &BlendTree) -> BlendLibrary {
    let mut lib = BlendLibrary::default();
    add(&mut lib, clips(), tree).unwrap_or_else(|e| panic!("{e}"));
    lib
}

/// The root's weights for parameters `params`, by clip id (= the authored child index).
fn weights4(lib: &BlendLibrary, params: Vec4) -> Vec<f32> {
    let t = lib.trees[0];
    let root = lib.nodes[t.node_offset as usize];
    let w = node_child_weights(lib, &root, params).unwrap();
    assert!(w[root.child_count as usize..].iter().all(|&x| x == 0.0), "{w:?}");
    let mut by_clip = vec![0.0; root.child_count as usize];
    for (k, &wk) in w.iter().enumerate().take(root.child_count as usize) {
        let c = lib.children[root.child_offset as usize + k];
        let clip = lib.nodes[(t.node_offset + c.node) as usize].clip as usize;
        by_clip[clip] = wk;
    }
    by_clip
}

fn weights(lib: &BlendLibrary, p: Vec2) -> Vec<f32> {
    weights4(lib, Vec4::new(p.x, p.y, 0.0, 0.0))
}

fn assert_close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "got {got:?}, want {want:?}");
    }
}

/// Weights ≥ 0, finite, summing to 1, at random parameters in [-range, range]²; and a step of
/// 1e-3 changes no weight by more than `bound` (skipping steps for which `skip` holds). Returns
/// the largest change seen.
fn check_normalized_and_continuous(
    lib: &BlendLibrary,
    range: f32,
    bound: f32,
    skip: impl Fn(Vec2, Vec2) -> bool,
) -> f32 {
    let mut r = SmallRng::seed_from_u64(7);
    let mut worst = 0.0f32;
    for _ in 0..5000 {
        let p = Vec2::new(r.gen_range(-range..range), r.gen_range(-range..range));
        let w = weights(lib, p);
        assert!(w.iter().all(|&x| x.is_finite() && x >= 0.0), "{p}: {w:?}");
        let sum: f32 = w.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "{p}: sum {sum}, {w:?}");
        let q = p + Vec2::from_angle(r.gen_range(0.0..std::f32::consts::TAU)) * 1e-3;
        if skip(p, q) {
            continue;
        }
        let v = weights(lib, q);
        let jump = w.iter().zip(&v).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(jump <= bound, "{p} -> {q}: {w:?} -> {v:?}");
        worst = worst.max(jump);
    }
    worst
}

fn assert_exact_samples(lib: &BlendLibrary, positions: &[Vec2]) {
    for (k, &p) in positions.iter().enumerate() {
        let w = weights(lib, p);
        for (j, &x) in w.iter().enumerate() {
            let want = if j == k { 1.0 } else { 0.0 };
            assert!((x - want).abs() < 1e-6, "sample {k} at {p}: {w:?}");
        }
    }
}

fn no_skip(_: Vec2, _: Vec2) -> bool {
    false
}

// ---------------------------------------------------------------------------------------------
// 1D

#[test]
fn one_d_interpolates_between_neighbours_and_clamps_at_the_ends() {
    // Given unsorted; packed sorted.
    let lib = build(&tree_1d(&[1.0, -1.0, 3.0]));
    let root = lib.nodes[0];
    assert_eq!(root.kind, node_kind::BLEND_1D);
    let xs: Vec<f32> = (0..3).map(|k| lib.children[k].position.x).collect();
    assert_eq!(xs, [-1.0, 1.0, 3.0]);
    let w = |b: f32| weights4(&lib, Vec4::new(9.0, 9.0, b, 9.0));
    assert_close(&w(0.0), &[0.5, 0.5, 0.0], 1e-6);
    assert_close(&w(2.0), &[0.5, 0.0, 0.5], 1e-6);
    assert_close(&w(1.5), &[0.75, 0.0, 0.25], 1e-6);
    assert_close(&w(-10.0), &[0.0, 1.0, 0.0], 0.0);
    assert_close(&w(10.0), &[0.0, 0.0, 1.0], 0.0);
    assert_close(&w(f32::INFINITY), &[0.0, 0.0, 1.0], 0.0);
    for (k, t) in [1.0, -1.0, 3.0].into_iter().enumerate() {
        let got = w(t);
        assert_eq!(got[k], 1.0, "{t}: {got:?}");
    }
    // NaN reads as 0.
    assert_eq!(w(f32::NAN), w(0.0));
    // Normalized and continuous (slope ≤ 1/2 per unit: a 1e-3 step moves a weight by ≤ 5e-4).
    let mut r = SmallRng::seed_from_u64(1);
    for _ in 0..5000 {
        let b = r.gen_range(-3.0..5.0);
        let a = w(b);
        let c = w(b + 1e-3);
        assert!(
            a.iter().all(|&x| x >= 0.0) && (a.iter().sum::<f32>() - 1.0).abs() < 1e-5,
            "{a:?}"
        );
        assert!(
            a.iter().zip(&c).all(|(x, y)| (x - y).abs() <= 5.01e-4),
            "{b}: {a:?} {c:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Bilinear

#[test]
fn bilinear_weights() {
    // Corners given in a scrambled order: TR, BL, TL, BR.
    let corners = [
        Vec2::new(2.0, 1.0),
        Vec2::new(-2.0, -1.0),
        Vec2::new(-2.0, 1.0),
        Vec2::new(2.0, -1.0),
    ];
    let lib = build(&tree_2d(Blend2DKind::Bilinear, &corners));
    let stored: Vec<Vec2> = (0..4).map(|k| lib.children[k].position).collect();
    assert_eq!(
        stored,
        [corners[1], corners[3], corners[2], corners[0]],
        "BL, BR, TL, TR"
    );
    assert_close(&weights(&lib, Vec2::ZERO), &[0.25; 4], 1e-6);
    // Midpoint of the bottom edge: half each of BL and BR.
    assert_close(&weights(&lib, Vec2::new(0.0, -1.0)), &[0.0, 0.5, 0.0, 0.5], 1e-6);
    // Midpoint of the right edge: TR and BR.
    assert_close(&weights(&lib, Vec2::new(2.0, 0.0)), &[0.5, 0.0, 0.0, 0.5], 1e-6);
    // x at 3/4, y at 1/4: BL (1/4)(3/4), BR (3/4)(3/4), TL (1/4)(1/4), TR (3/4)(1/4).
    assert_close(
        &weights(&lib, Vec2::new(1.0, -0.5)),
        &[3.0 / 16.0, 3.0 / 16.0, 1.0 / 16.0, 9.0 / 16.0],
        1e-6,
    );
    // Outside: clamped to the rectangle.
    assert_eq!(weights(&lib, Vec2::new(5.0, 7.0)), weights(&lib, Vec2::new(2.0, 1.0)));
    assert_exact_samples(&lib, &corners);
    // Gradient ≤ 1/4 + 1/2 per unit: a 1e-3 step moves a weight by < 1e-3.
    check_normalized_and_continuous(&lib, 3.0, 1e-3, no_skip);
}

// ---------------------------------------------------------------------------------------------
// Triangle

#[test]
fn triangle_weights_are_barycentric_and_clamped_to_the_triangle() {
    let tri = [Vec2::new(0.0, 0.0), Vec2::new(3.0, 0.0), Vec2::new(0.0, 3.0)];
    let lib = build(&tree_2d(Blend2DKind::Triangle, &tri));
    assert_close(&weights(&lib, Vec2::new(1.0, 1.0)), &[1.0 / 3.0; 3], 1e-6);
    assert_close(&weights(&lib, Vec2::new(1.5, 0.0)), &[0.5, 0.5, 0.0], 1e-6);
    // Outside, below the bottom edge: the closest point (1, 0).
    assert_close(&weights(&lib, Vec2::new(1.0, -5.0)), &[2.0 / 3.0, 1.0 / 3.0, 0.0], 1e-6);
    // Beyond the hypotenuse: the closest point is (1.5, 1.5).
    assert_close(&weights(&lib, Vec2::new(3.0, 3.0)), &[0.0, 0.5, 0.5], 1e-6);
    // Beyond a corner.
    assert_close(&weights(&lib, Vec2::new(-2.0, -2.0)), &[1.0, 0.0, 0.0], 0.0);
    assert_exact_samples(&lib, &tri);
    // Gradient ≤ 1/3 + ... per unit: bound 2e-3.
    check_normalized_and_continuous(&lib, 5.0, 2e-3, no_skip);
}

// ---------------------------------------------------------------------------------------------
// Delaunay

#[test]
fn delaunay_on_a_square_with_a_centre() {
    let lib = build(&tree_2d(Blend2DKind::Delaunay, &SQ));
    let root = lib.nodes[0];
    assert_eq!(root.kind, node_kind::DELAUNAY);
    let entries = &lib.triangles[root.triangle_offset as usize..][..root.triangle_count as usize];
    assert_eq!(entries.iter().filter(|e| e[3] == 0).count(), 4, "{entries:?}");
    assert_eq!(entries.iter().filter(|e| e[3] == 1).count(), 4, "{entries:?}");
    // Triangles first, then hull edges.
    assert!(entries[..4].iter().all(|e| e[3] == 0));
    // Inside the bottom triangle (BL, BR, centre): (0, -0.5) is half the centre, a quarter each
    // of BL and BR.
    assert_close(&weights(&lib, Vec2::new(0.0, -0.5)), &[0.25, 0.25, 0.0, 0.0, 0.5], 1e-6);
    // On the diagonal BL–centre: (-0.5, -0.5) is half BL, half centre.
    assert_close(&weights(&lib, Vec2::new(-0.5, -0.5)), &[0.5, 0.0, 0.0, 0.0, 0.5], 1e-6);
    // Right triangle (BR, TR, centre): (0.5, 0.25) = 0.5 c + 0.375 TR + 0.125 BR... solve:
    // p = a BR + b TR + c 0 with a + b + c = 1: x = a + b = 0.5, y = -a + b = 0.25.
    assert_close(
        &weights(&lib, Vec2::new(0.5, 0.25)),
        &[0.0, 0.125, 0.0, 0.375, 0.5],
        1e-6,
    );
    // On the hull: the middle of the top edge.
    assert_close(&weights(&lib, Vec2::new(0.0, 1.0)), &[0.0, 0.0, 0.5, 0.5, 0.0], 1e-6);
    // Outside: the closest hull point. (0.5, 3) -> (0.5, 1), 3/4 TR, 1/4 TL.
    assert_close(&weights(&lib, Vec2::new(0.5, 3.0)), &[0.0, 0.0, 0.25, 0.75, 0.0], 1e-6);
    // Beyond a corner.
    assert_close(&weights(&lib, Vec2::new(4.0, -4.0)), &[0.0, 1.0, 0.0, 0.0, 0.0], 0.0);
    assert_exact_samples(&lib, &SQ);
    check_normalized_and_continuous(&lib, 3.0, 2e-3, no_skip);
}

#[test]
fn delaunay_on_random_points_is_normalized_continuous_and_exact_at_samples() {
    let mut r = SmallRng::seed_from_u64(3);
    for round in 0..5 {
        let pts: Vec<Vec2> = (0..4 + 3 * round)
            .map(|_| Vec2::new(r.gen_range(-2.0..2.0), r.gen_range(-2.0..2.0)))
            .collect();
        let lib = build(&tree_2d(Blend2DKind::Delaunay, &pts));
        assert_exact_samples(&lib, &pts);
        // Random points can make thin triangles: steep but continuous.
        check_normalized_and_continuous(&lib, 3.0, 0.05, no_skip);
    }
    // Points on a grid: collinear and cocircular samples.
    let grid: Vec<Vec2> = (0..16).map(|k| Vec2::new((k % 4) as f32, (k / 4) as f32)).collect();
    let lib = build(&tree_2d(Blend2DKind::Delaunay, &grid));
    assert_exact_samples(&lib, &grid);
    check_normalized_and_continuous(&lib, 4.0, 5e-3, no_skip);
}

// ---------------------------------------------------------------------------------------------
// Simple directional

fn ring(n: usize, radius: f32, phase: f32) -> Vec<Vec2> {
    (0..n)
        .map(|k| Vec2::from_angle(phase + k as f32 * std::f32::consts::TAU / n as f32) * radius)
        .collect()
}

#[test]
fn simple_directional_follows_the_reference_steps() {
    // Four directions and a centre (child 4).
    let lib = build(&tree_2d(Blend2DKind::SimpleDirectional, &SQ));
    // p = 0: the centre.
    assert_eq!(weights(&lib, Vec2::ZERO), [0.0, 0.0, 0.0, 0.0, 1.0]);
    // Between BR (1,-1) and TR (1,1) at 45° from each: (1, 0) = t (1,-1) + t (1,1), t = 1/2, N = 1.
    assert_close(&weights(&lib, Vec2::new(1.0, 0.0)), &[0.0, 0.5, 0.0, 0.5, 0.0], 1e-6);
    // Halfway in: N = 1/2, the rest to the centre.
    assert_close(&weights(&lib, Vec2::new(0.5, 0.0)), &[0.0, 0.25, 0.0, 0.25, 0.5], 1e-6);
    // Inside the ring on a sample's direction: (0.25, 0.25) = 0.25 TR, N = 1/4.
    assert_close(
        &weights(&lib, Vec2::new(0.25, 0.25)),
        &[0.0, 0.0, 0.0, 0.25, 0.75],
        1e-6,
    );
    // Beyond the samples: N clamps at 1.
    assert_close(&weights(&lib, Vec2::new(5.0, 0.0)), &[0.0, 0.5, 0.0, 0.5, 0.0], 1e-6);
    assert_close(&weights(&lib, Vec2::new(3.0, 3.0)), &[0.0, 0.0, 0.0, 1.0, 0.0], 1e-6);
    // Wrap-around across ±π: between TL (135°) and BL (−135°), at 180° and just either side.
    assert_close(&weights(&lib, Vec2::new(-1.0, 0.0)), &[0.5, 0.0, 0.5, 0.0, 0.0], 1e-6);
    let above = weights(&lib, Vec2::new(-1.0, 1e-4));
    let below = weights(&lib, Vec2::new(-1.0, -1e-4));
    assert_close(&above, &[0.5 - 5e-5, 0.0, 0.5 + 5e-5, 0.0, 0.0], 1e-6);
    assert_close(&below, &[0.5 + 5e-5, 0.0, 0.5 - 5e-5, 0.0, 0.0], 1e-6);
    // Off-axis inside the BR–TR wedge: (1, 0.5) = a (1,-1) + b (1,1): a = 1/4, b = 3/4.
    assert_close(&weights(&lib, Vec2::new(1.0, 0.5)), &[0.0, 0.25, 0.0, 0.75, 0.0], 1e-6);
    assert_exact_samples(&lib, &SQ);
    // Continuous everywhere with samples all around (every gap < 180°).
    let worst = check_normalized_and_continuous(&lib, 3.0, 5e-3, no_skip);
    assert!(worst > 0.0);

    // Without a centre: p = 0 gives 1/n each, the rest is spread evenly.
    let lib = build(&tree_2d(Blend2DKind::SimpleDirectional, &SQ[..4]));
    assert_eq!(weights(&lib, Vec2::ZERO), [0.25; 4]);
    // (0.5, 0): N = 1/2 over BR and TR, 1/8 to each of the four.
    assert_close(&weights(&lib, Vec2::new(0.5, 0.0)), &[0.125, 0.375, 0.125, 0.375], 1e-6);
    assert_exact_samples(&lib, &SQ[..4]);
    // Continuous, including through the origin (N → 0 there).
    check_normalized_and_continuous(&lib, 3.0, 5e-3, no_skip);

    // Eight directions at radius 1 and 2 alternately, with a centre.
    let mut dirs = ring(8, 1.0, 0.3);
    for (k, d) in dirs.iter_mut().enumerate() {
        *d *= 1.0 + (k % 2) as f32;
    }
    dirs.push(Vec2::ZERO);
    let lib = build(&tree_2d(Blend2DKind::SimpleDirectional, &dirs));
    assert_exact_samples(&lib, &dirs);
    check_normalized_and_continuous(&lib, 3.0, 0.01, no_skip);
}

#[test]
fn simple_directional_with_a_gap_over_half_a_turn_is_discontinuous_only_on_its_edges() {
    // Samples at 0° and 90° only: the 270° gap has t1 or t2 < 0, where the reference gives
    // c = 1/2 each. Crossing the direction of a sample from inside the gap jumps. This is the
    // reference's algorithm; such spaces should put samples all around.
    let pts = [Vec2::X, Vec2::Y];
    let lib = build(&tree_2d(Blend2DKind::SimpleDirectional, &pts));
    let on = weights(&lib, Vec2::new(1.0, 0.0));
    let just_below = weights(&lib, Vec2::new(1.0, -1e-4));
    assert_close(&on, &[1.0, 0.0], 0.0);
    assert_close(&just_below, &[0.5, 0.5], 1e-3);
    // Away from those two rays it is continuous, and always normalized.
    let near_edge = |p: Vec2, q: Vec2| {
        let crosses = |a: Vec2, b: Vec2, d: Vec2| d.perp_dot(a).signum() != d.perp_dot(b).signum() && a.dot(d) > 0.0;
        crosses(p, q, Vec2::X) || crosses(p, q, Vec2::Y) || p.length() < 0.01
    };
    check_normalized_and_continuous(&lib, 3.0, 5e-3, near_edge);
}

// ---------------------------------------------------------------------------------------------
// Freeform

#[test]
fn freeform_cartesian_gradient_bands() {
    // Two samples: a linear ramp between them, clamped beyond.
    let lib = build(&tree_2d(
        Blend2DKind::FreeformCartesian,
        &[Vec2::ZERO, Vec2::new(2.0, 0.0)],
    ));
    assert_close(&weights(&lib, Vec2::new(0.5, 3.0)), &[0.75, 0.25], 1e-6);
    assert_close(&weights(&lib, Vec2::new(-4.0, 0.0)), &[1.0, 0.0], 0.0);
    // A square with a centre: symmetric points give symmetric weights.
    let lib = build(&tree_2d(Blend2DKind::FreeformCartesian, &SQ));
    let w = weights(&lib, Vec2::new(0.5, 0.5));
    let v = weights(&lib, Vec2::new(-0.5, 0.5));
    assert_close(&[w[3], w[0], w[1], w[2], w[4]], &[v[2], v[1], v[0], v[3], v[4]], 1e-6);
    assert!((w[1] - w[2]).abs() < 1e-6, "{w:?}");
    // Hand-worked, p = (0.5, 0.5): h_TR = min over bands (towards C: 1 − (−.5,−.5)·(−1,−1)/2 = 0.5,
    // towards BL, BR, TL: 0.75) = 0.5; h_C = 0.5 (band towards TR); h_BR = h_TL = 0 (band towards
    // C: 1 − 2/2); h_BL = 0. So TR and C half each.
    assert_close(&w, &[0.0, 0.0, 0.0, 0.5, 0.5], 1e-6);
    // p = (0.5, 0): h_C = 0.75 (bands towards TR and BR), h_TR = h_BR = 0.25 (band towards C:
    // 1 − 1.5/2), h_TL = h_BL = 0. Sum 1.25.
    assert_close(&weights(&lib, Vec2::new(0.5, 0.0)), &[0.0, 0.2, 0.0, 0.2, 0.6], 1e-6);
    // The centre alone at the origin; all four corners equal on a symmetric ring, none at p = 0.
    assert_eq!(weights(&lib, Vec2::ZERO), [0.0, 0.0, 0.0, 0.0, 1.0]);
    let lib4 = build(&tree_2d(Blend2DKind::FreeformCartesian, &SQ[..4]));
    assert_close(&weights(&lib4, Vec2::ZERO), &[0.25; 4], 1e-6);
    for l in [&lib, &lib4] {
        let pos: Vec<Vec2> = if l.children.len() == 5 {
            SQ.to_vec()
        } else {
            SQ[..4].to_vec()
        };
        assert_exact_samples(l, &pos);
        check_normalized_and_continuous(l, 3.0, 0.01, no_skip);
    }
    // Random layouts.
    let mut r = SmallRng::seed_from_u64(11);
    for n in [3, 6, 12, 16] {
        let pts: Vec<Vec2> = (0..n)
            .map(|_| Vec2::new(r.gen_range(-2.0..2.0), r.gen_range(-2.0..2.0)))
            .collect();
        let lib = build(&tree_2d(Blend2DKind::FreeformCartesian, &pts));
        assert_exact_samples(&lib, &pts);
        check_normalized_and_continuous(&lib, 3.0, 0.05, no_skip);
    }
}

#[test]
fn freeform_directional_gradient_bands() {
    // Eight directions, a centre.
    let mut pts = ring(8, 1.0, 0.0);
    pts.push(Vec2::ZERO);
    let lib = build(&tree_2d(Blend2DKind::FreeformDirectional, &pts));
    assert_exact_samples(&lib, &pts);
    // Halfway in angle between samples 0 (0°) and 1 (45°) at radius 1: equal weights for both.
    let w = weights(&lib, Vec2::from_angle(std::f32::consts::PI / 8.0));
    assert!((w[0] - w[1]).abs() < 1e-6 && w[0] > 0.3, "{w:?}");
    // Mirror symmetry about the x axis: sample k ↔ 8 − k.
    let a = weights(&lib, Vec2::new(0.6, 0.2));
    let b = weights(&lib, Vec2::new(0.6, -0.2));
    for k in 1..8 {
        assert!((a[k] - b[8 - k]).abs() < 1e-6, "{a:?} {b:?}");
    }
    assert!((a[0] - b[0]).abs() < 1e-6 && (a[8] - b[8]).abs() < 1e-6);
    // At the origin: the centre alone.
    assert_eq!(weights(&lib, Vec2::ZERO)[8], 1.0);
    // Continuous, but steep near the origin (angles change like 1/|p| there): a 1e-3 step moves a
    // weight by about 0.02 at |p| = 0.03, by < 0.005 beyond |p| = 0.5.
    check_normalized_and_continuous(&lib, 3.0, 0.05, no_skip);
    let far = |p: Vec2, _| p.length() < 0.5;
    check_normalized_and_continuous(&lib, 3.0, 0.005, far);

    // Without a centre, two rings (walk at radius 1, run at radius 2) in four directions.
    let mut pts = ring(4, 1.0, 0.0);
    pts.extend(ring(4, 2.0, 0.0));
    let lib = build(&tree_2d(Blend2DKind::FreeformDirectional, &pts));
    assert_exact_samples(&lib, &pts);
    // On the x axis at radius 1.5: between walk and run forward, equal by symmetry in radius.
    let w = weights(&lib, Vec2::new(1.5, 0.0));
    assert!((w[0] - w[4]).abs() < 1e-5 && w[0] > 0.4, "{w:?}");
    // p = 0 without a centre: every band is ≤ 0 (towards the neighbour on the same ring
    // θ_ip = θ_ij gives h = 0), so the weights fall back to the nearest sample (the first of the
    // four inner ones). Freeform directional spaces want a centre sample; without one the origin is
    // a genuine discontinuity, so continuity is checked away from it.
    assert_eq!(weights(&lib, Vec2::ZERO), [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    check_normalized_and_continuous(&lib, 3.0, 0.05, |p, _| p.length() < 0.05);
}

// ---------------------------------------------------------------------------------------------
// Direct, NaN, nested trees

#[test]
fn direct_weights_are_the_parameters_clamped_at_zero() {
    let tree = BlendTree {
        name: "direct".into(),
        nodes: vec![
            BlendNode::Direct {
                children: vec![(3, 1), (0, 2), (3, 3)],
            },
            BlendNode::Clip(clip(0)),
            BlendNode::Clip(clip(1)),
            BlendNode::Clip(clip(2)),
        ],
        root: 0,
    };
    let lib = build(&tree);
    assert_eq!(weights4(&lib, Vec4::new(0.7, 9.0, 9.0, 0.2)), [0.2, 0.7, 0.2]);
    assert_eq!(weights4(&lib, Vec4::new(-1.0, 9.0, 9.0, 3.0)), [3.0, 0.0, 3.0]);
    assert_eq!(weights4(&lib, Vec4::new(f32::NAN, 0.0, 0.0, 0.5)), [0.5, 0.0, 0.5]);
}

#[test]
fn nan_parameters_read_as_zero_for_every_kind() {
    let kinds = [
        (Blend2DKind::Bilinear, SQ[..4].to_vec()),
        (Blend2DKind::Triangle, SQ[..3].to_vec()),
        (Blend2DKind::Delaunay, SQ.to_vec()),
        (Blend2DKind::SimpleDirectional, SQ.to_vec()),
        (Blend2DKind::SimpleDirectional, SQ[..4].to_vec()),
        (Blend2DKind::FreeformCartesian, SQ.to_vec()),
        (Blend2DKind::FreeformDirectional, SQ.to_vec()),
        (Blend2DKind::FreeformDirectional, SQ[..4].to_vec()),
    ];
    for (kind, pts) in kinds {
        let lib = build(&tree_2d(kind, &pts));
        let nan = weights4(&lib, Vec4::new(f32::NAN, 0.5, 0.0, 0.0));
        assert_eq!(nan, weights(&lib, Vec2::new(0.0, 0.5)), "{kind:?}");
        let inf = weights4(&lib, Vec4::new(f32::INFINITY, f32::NEG_INFINITY, 0.0, 0.0));
        assert!(inf.iter().all(|x| x.is_finite() && *x >= 0.0), "{kind:?}: {inf:?}");
        assert!((inf.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{kind:?}: {inf:?}");
    }
}

#[test]
fn a_nested_tree_is_packed_root_first_parents_before_children() {
    // Node 3 (1D over speed) is shared by the root (direct) and node 1 (2D). Authored out of order.
    let tree = BlendTree {
        name: "nested".into(),
        nodes: vec![
            BlendNode::Clip(clip(0)),
            BlendNode::Blend2D {
                kind: Blend2DKind::FreeformCartesian,
                parameters: [1, 2],
                children: vec![(Vec2::ZERO, 3), (Vec2::X, 0), (Vec2::Y, 4)],
            },
            BlendNode::Direct {
                children: vec![(0, 1), (3, 3)],
            },
            BlendNode::Blend1D {
                parameter: 0,
                children: vec![(1.0, 4), (0.0, 0)],
            },
            BlendNode::Clip(clip(5)),
        ],
        root: 2,
    };
    let mut lib = build(&tree);
    let t = lib.trees[0];
    assert_eq!((t.node_offset, t.node_count, t.skeleton), (0, 5, 0));
    let nodes = &lib.nodes[..5];
    assert_eq!(nodes[0].kind, node_kind::DIRECT);
    for (k, n) in nodes.iter().enumerate() {
        for c in &lib.children[n.child_offset as usize..][..n.child_count as usize] {
            assert!(c.node as usize > k && (c.node as usize) < 5, "node {k} -> {}", c.node);
        }
    }
    // A second tree goes after the first; ids by name.
    let second = add(&mut lib, clips(), &tree_1d(&[0.0, 1.0])).unwrap();
    assert_eq!(second.index(), 1);
    assert_eq!(lib.tree_id("1d"), Some(second));
    assert_eq!(lib.tree_id("nested").map(|i| i.index()), Some(0));
    assert_eq!(lib.trees[1].node_offset, 5);
    let root = lib.nodes[5];
    assert_eq!(root.child_offset, 2 + 3 + 2);
}

// ---------------------------------------------------------------------------------------------
// Builder errors

fn assert_rejected(tree: &BlendTree, expect: &[&str]) {
    let clips = clips();
    let mut lib = BlendLibrary::default();
    let mut existing = tree_1d(&[0.0, 1.0]);
    existing.name = "existing".into();
    add(&mut lib, clips, &existing).unwrap();
    let before = format!("{lib:?}");
    let e = add(&mut lib, clips, tree).expect_err("must be rejected").to_string();
    assert!(e.contains(&format!("blend tree '{}'", tree.name)), "{e}");
    for x in expect {
        assert!(e.contains(x), "'{e}' does not mention '{x}'");
    }
    assert_eq!(format!("{lib:?}"), before, "the library changed after: {e}");
}

#[test]
fn bad_trees_are_rejected_with_the_tree_and_node_named() {
    let mut t = tree_2d(
        Blend2DKind::FreeformCartesian,
        &[Vec2::ZERO, Vec2::X, Vec2::new(1.0, 0.00005)],
    );
    t.name = "coincident".into();
    assert_rejected(&t, &["node 0", "children 1 and 2", "same position"]);

    assert_rejected(
        &tree_2d(Blend2DKind::Triangle, &[Vec2::ZERO, Vec2::X]),
        &["node 0", "exactly 3"],
    );
    assert_rejected(
        &tree_2d(Blend2DKind::Bilinear, &[Vec2::ZERO, Vec2::X, Vec2::Y]),
        &["node 0", "exactly 4"],
    );
    assert_rejected(
        &tree_2d(
            Blend2DKind::Bilinear,
            &[Vec2::ZERO, Vec2::X, Vec2::Y, Vec2::new(1.0, 2.0)],
        ),
        &["node 0", "rectangle"],
    );
    assert_rejected(
        &tree_2d(Blend2DKind::Triangle, &[Vec2::ZERO, Vec2::X, Vec2::X * 2.0]),
        &["node 0", "collinear"],
    );
    assert_rejected(
        &tree_2d(
            Blend2DKind::Delaunay,
            &[Vec2::ZERO, Vec2::X, Vec2::X * 2.0, Vec2::X * 3.0],
        ),
        &["node 0", "collinear"],
    );
    assert_rejected(&tree_2d(Blend2DKind::Delaunay, &[Vec2::ZERO, Vec2::X]), &["at least 3"]);
    assert_rejected(
        &tree_2d(Blend2DKind::SimpleDirectional, &[Vec2::ZERO, Vec2::X]),
        &["node 0", "at least 2 samples away from the origin"],
    );
    assert_rejected(
        &tree_2d(Blend2DKind::SimpleDirectional, &[Vec2::Y, Vec2::X, Vec2::X * 2.0]),
        &["node 0", "children 1 and 2", "same direction"],
    );
    assert_rejected(&tree_2d(Blend2DKind::FreeformDirectional, &[Vec2::X]), &["at least 2"]);
    assert_rejected(
        &tree_2d(
            Blend2DKind::FreeformDirectional,
            &[Vec2::X, Vec2::new(0.0, 5e-5), Vec2::new(5e-5, 0.0)],
        ),
        &["children 1 and 2", "origin"],
    );
    assert_rejected(&tree_1d(&[0.0]), &["node 0", "at least 2"]);
    assert_rejected(
        &tree_1d(&[0.0, 1.0, 0.0]),
        &["node 0", "children 0 and 2", "same threshold"],
    );
    assert_rejected(&tree_1d(&[0.0, f32::NAN]), &["node 0", "child 1", "not finite"]);
    assert_rejected(
        &tree_2d(
            Blend2DKind::FreeformCartesian,
            &[Vec2::ZERO, Vec2::new(f32::INFINITY, 0.0)],
        ),
        &["node 0", "child 1", "not finite"],
    );

    // Parameter index 4.
    let mut t = tree_1d(&[0.0, 1.0]);
    t.name = "param".into();
    let BlendNode::Blend1D { parameter, .. } = &mut t.nodes[0] else {
        unreachable!()
    };
    *parameter = 4;
    assert_rejected(&t, &["node 0", "parameter index 4"]);
    let mut t = tree_2d(Blend2DKind::FreeformCartesian, &[Vec2::ZERO, Vec2::X]);
    let BlendNode::Blend2D { parameters, .. } = &mut t.nodes[0] else {
        unreachable!()
    };
    *parameters = [0, 4];
    assert_rejected(&t, &["node 0", "parameter index 4"]);
    let direct = |children: Vec<(u32, usize)>| BlendTree {
        name: "direct".into(),
        nodes: vec![BlendNode::Direct { children }, BlendNode::Clip(clip(0))],
        root: 0,
    };
    assert_rejected(&direct(vec![(4, 1)]), &["node 0", "child 0", "parameter index 4"]);
    assert_rejected(
        &BlendTree {
            name: "direct".into(),
            nodes: vec![BlendNode::Direct { children: vec![] }],
            root: 0,
        },
        &["node 0", "at least 1"],
    );

    // Cycle: 0 -> 1 -> 2 -> 1.
    let cycle = BlendTree {
        name: "cycle".into(),
        nodes: vec![
            BlendNode::Blend1D {
                parameter: 0,
                children: vec![(0.0, 1), (1.0, 3)],
            },
            BlendNode::Direct { children: vec![(0, 2)] },
            BlendNode::Direct { children: vec![(0, 1)] },
            BlendNode::Clip(clip(0)),
        ],
        root: 0,
    };
    assert_rejected(&cycle, &["node 2", "cycle"]);
    // A self-loop.
    let selfloop = BlendTree {
        name: "self".into(),
        nodes: vec![BlendNode::Direct { children: vec![(0, 0)] }],
        root: 0,
    };
    assert_rejected(&selfloop, &["node 0", "cycle"]);

    // A clip of another skeleton.
    let mut t = tree_1d(&[0.0, 1.0]);
    t.name = "skeletons".into();
    t.nodes[2] = BlendNode::Clip(clip(16));
    assert_rejected(
        &t,
        &["node 2", "node 1", "'a0'", "'b0'", "skeleton 'b'", "skeleton 'a'"],
    );
    // A clip that does not exist.
    // A clip of another library, in range here or not.
    let mut other = LibraryBuilder::new();
    let s =
        other.add_skeleton(Skeleton::from_rest_pose("o", vec![("o_root".into(), None, Transform::IDENTITY)]).unwrap());
    for k in 0..18 {
        let c = Clip {
            morph_weights: Vec::new(),
            events: Vec::new(),
            curves: Vec::new(),
            name: format!("o{k}"),
            duration: 1.0,
            looping: true,
            tracks: vec![],
        };
        let id = other.add_clip(s, &c).unwrap();
        if k == 3 || k == 17 {
            t.nodes[2] = BlendNode::Clip(id);
            let expect = format!(
                "node 2: clip {k} belongs to another library (library {})",
                other.tag().get()
            );
            assert_rejected(
                &t,
                &[&expect, &format!("not this one (library {})", clips().tag().get())],
            );
        }
    }

    // Structure.
    assert_rejected(
        &BlendTree {
            name: "empty".into(),
            nodes: vec![],
            root: 0,
        },
        &["no nodes"],
    );
    let mut t = tree_1d(&[0.0, 1.0]);
    t.name = "root".into();
    t.root = 3;
    assert_rejected(&t, &["root 3"]);
    let mut t = tree_1d(&[0.0, 1.0]);
    t.name = "child".into();
    let BlendNode::Blend1D { children, .. } = &mut t.nodes[0] else {
        unreachable!()
    };
    children[1].1 = 9;
    assert_rejected(&t, &["node 0", "node 9"]);
    let mut t = tree_1d(&[0.0, 1.0]);
    t.name = "unreachable".into();
    t.nodes.push(BlendNode::Clip(clip(3)));
    assert_rejected(&t, &["node 3", "not reachable"]);
    // The name is taken (assert_rejected adds a tree "existing" first).
    let mut t = tree_1d(&[0.0, 2.0]);
    t.name = "existing".into();
    assert_rejected(&t, &["already exists"]);
    // Too many children, too many nodes.
    let thresholds: Vec<f32> = (0..17).map(|k| k as f32).collect();
    let mut t = tree_1d(&thresholds);
    t.name = "wide".into();
    for n in &mut t.nodes[1..] {
        *n = BlendNode::Clip(clip(0));
    }
    assert_rejected(&t, &["node 0", "17 children"]);
    let mut nodes: Vec<BlendNode> = (0..40)
        .map(|k| BlendNode::Direct {
            children: vec![(0, k + 1)],
        })
        .collect();
    nodes.push(BlendNode::Clip(clip(0)));
    assert_rejected(
        &BlendTree {
            name: "deep".into(),
            nodes,
            root: 0,
        },
        &["more than 32 nodes"],
    );
}
