//! Offline retargeting against the project's retargeting reference: its checks (identity exact,
//! S → T → S, bone directions, the hips' height) on the CMU take and the mannequin, onto a
//! generated variant of the mannequin with other proportions, Mixamo's joint names and a T-pose
//! rest; and a refusal, naming the joints, for each map the rules forbid.

use glam::{DMat4, DQuat, DVec3, Quat, Vec3};
use std::path::Path;
use wgpu_anim::offline::gltf_import;
use wgpu_anim::offline::retarget::{BoneMap, RetargetOptions, Retargeter, humanoid_feet};
use wgpu_anim::reference::{self, ClipSampler};
use wgpu_anim::{Clip, Error, Skeleton, mannequin};

mod common;
use common::{key_times, mannequin_variant as variant, quat_angle as angle};

fn rotation_of(m: &DMat4) -> DQuat {
    m.to_scale_rotation_translation().1
}

/// Model matrices of `skeleton` playing `clip` at `t`.
fn model(skeleton: &Skeleton, clip: &Clip, t: f32) -> Vec<DMat4> {
    reference::local_to_model(skeleton, &reference::sample(skeleton, clip, f64::from(t)))
}

fn cmu() -> (Skeleton, Clip, Vec<usize>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/cmu/cmu_01_03.glb");
    let imported = gltf_import::load(&path).expect("the CMU take imports");
    let s = imported.skeletons.into_iter().next().expect("one skeleton");
    let clip = s.clips.into_iter().next().expect("one clip").clip;
    (s.skeleton, clip, s.skin_joints)
}

fn walk(skeleton: &Skeleton) -> Clip {
    mannequin::clips(skeleton)
        .into_iter()
        .find(|c| c.name == "walk")
        .expect("the mannequin walks")
}

#[test]
fn identity_retarget_is_the_clip_itself() {
    let (s, clip, _) = cmu();
    let map = BoneMap::by_name(&s, &s);
    assert_eq!(map.len(), s.joint_count());
    let r = Retargeter::new(&s, &s, &map, &RetargetOptions::default()).unwrap();
    assert_eq!(r.retarget_root(), (0, 0));
    assert!((r.height_ratio() - 1.0).abs() < 1e-12);
    let out = r.retarget(&clip).unwrap();
    assert_eq!(
        (out.duration, out.looping, out.events.len()),
        (clip.duration, clip.looping, clip.events.len())
    );
    let (a, b) = (ClipSampler::new(&s, &clip), ClipSampler::new(&s, &out));
    let (mut worst_rotation, mut worst_translation) = (0.0f64, 0.0f64);
    for t in key_times(&clip) {
        let (x, y) = (a.sample(f64::from(t)), b.sample(f64::from(t)));
        for j in 0..s.joint_count() {
            worst_rotation = worst_rotation.max(angle(x[j].rotation, y[j].rotation));
            let size = x[j].translation.length().max(1e-3);
            worst_translation = worst_translation.max((x[j].translation - y[j].translation).length() / size);
        }
    }
    assert!(worst_rotation <= 1e-6, "{worst_rotation} rad");
    assert!(worst_translation <= 1e-5, "{worst_translation} of the size");
}

#[test]
fn source_to_target_and_back_keeps_the_model_rotations() {
    let s = mannequin::skeleton();
    let t = variant(1.3, 0.6);
    let clip = walk(&s);
    let there = Retargeter::new(&s, &t, &BoneMap::humanoid(&s, &t).unwrap(), &RetargetOptions::default()).unwrap();
    let back = Retargeter::new(&t, &s, &BoneMap::humanoid(&t, &s).unwrap(), &RetargetOptions::default()).unwrap();
    assert_eq!(t.joint_names()[there.retarget_root().0], "mixamorig:Hips");
    let round = back.retarget(&there.retarget(&clip).unwrap()).unwrap();
    let mut worst = 0.0f64;
    let mut mapped = 0;
    for time in key_times(&clip) {
        let (a, b) = (model(&s, &clip, time), model(&s, &round, time));
        mapped = 0;
        for j in (0..s.joint_count()).filter(|&j| back.source_of(j).is_some()) {
            worst = worst.max(angle(rotation_of(&a[j]), rotation_of(&b[j])));
            mapped += 1;
        }
    }
    assert_eq!(mapped, 22, "the humanoid slots");
    assert!(worst <= 1e-4, "{worst} rad");
}

#[test]
fn the_hips_stand_at_the_targets_proportional_height() {
    let (cmu_skeleton, cmu_clip, skinned) = cmu();
    let long = variant(1.3, 0.0);
    let cases = [
        (mannequin::skeleton(), long.clone(), walk(&mannequin::skeleton()), None),
        (
            cmu_skeleton.clone(),
            mannequin::skeleton(),
            cmu_clip.clone(),
            Some(skinned.clone()),
        ),
        (cmu_skeleton, long, cmu_clip, Some(skinned)),
    ];
    for (s, t, clip, skinned) in cases {
        let mut options = RetargetOptions::default();
        if let Some(joints) = skinned {
            options = options.with_source_skinned(joints);
        }
        let r = Retargeter::new(&s, &t, &BoneMap::humanoid(&s, &t).unwrap(), &options).unwrap();
        let (root, source_root) = r.retarget_root();
        let out = r.retarget(&clip).unwrap();
        let h_t = {
            let rest = reference::local_to_model(&t, &reference::sample(&t, &Clip::rest_pose("rest", 1.0), 0.0));
            let lowest = rest.iter().map(|m| m.w_axis.y).fold(f64::INFINITY, f64::min);
            rest[root].w_axis.y - lowest
        };
        let mut worst = 0.0f64;
        for time in key_times(&clip) {
            let want = model(&s, &clip, time)[source_root].w_axis.y * r.height_ratio();
            let got = model(&t, &out, time)[root].w_axis.y;
            worst = worst.max((want - got).abs());
        }
        assert!(
            worst <= 1e-4 * h_t,
            "{} onto {}: {worst} m of {h_t}",
            s.name(),
            t.name()
        );
    }
}

#[test]
fn bones_with_matching_rests_point_the_same_way() {
    // Longer legs, the same rest directions: each mapped bone to its one mapped child points as
    // the source's does at every key.
    let s = mannequin::skeleton();
    let t = variant(1.4, 0.0);
    let clip = walk(&s);
    let r = Retargeter::new(&s, &t, &BoneMap::humanoid(&s, &t).unwrap(), &RetargetOptions::default()).unwrap();
    let out = r.retarget(&clip).unwrap();
    let bones = [
        ("thigh_l", "calf_l"),
        ("calf_r", "foot_r"),
        ("upperarm_l", "lowerarm_l"),
        ("spine_03", "neck"),
    ];
    let mut worst = 0.0f64;
    for time in key_times(&clip) {
        let (a, b) = (model(&s, &clip, time), model(&t, &out, time));
        for (from, to) in bones {
            let (sf, st) = (s.joint_index(from).unwrap(), s.joint_index(to).unwrap());
            let (tf, tt) = (
                (0..t.joint_count()).find(|&j| r.source_of(j) == Some(sf)).unwrap(),
                (0..t.joint_count()).find(|&j| r.source_of(j) == Some(st)).unwrap(),
            );
            let direction = |m: &[DMat4], x: usize, y: usize| (m[y].w_axis - m[x].w_axis).truncate().normalize();
            let (u, v): (DVec3, DVec3) = (direction(&a, sf, st), direction(&b, tf, tt));
            worst = worst.max(u.angle_between(v));
        }
    }
    assert!(worst <= 1e-3, "{worst} rad");
}

#[test]
fn cmu_takes_play_on_the_mannequin() {
    let (s, clip, skinned) = cmu();
    let t = mannequin::skeleton();
    let map = BoneMap::humanoid(&s, &t).unwrap();
    assert_eq!(map.source_of("pelvis"), Some("Hips"));
    assert_eq!(map.source_of("spine_01"), Some("LowerBack"));
    assert_eq!(map.source_of("ball_r"), Some("RightToeBase"));
    let r = Retargeter::new(&s, &t, &map, &RetargetOptions::default().with_source_skinned(skinned)).unwrap();
    let out = r.retarget(&clip).unwrap();
    // Each mapped joint turns from its rest as its source does, in model space (step 1).
    let mut worst = 0.0f64;
    let rest_s = model(&s, &Clip::rest_pose("rest", 1.0), 0.0);
    let rest_t = model(&t, &Clip::rest_pose("rest", 1.0), 0.0);
    for time in key_times(&clip).into_iter().step_by(7) {
        let (a, b) = (model(&s, &clip, time), model(&t, &out, time));
        for j in 0..t.joint_count() {
            if let Some(k) = r.source_of(j) {
                let turn_s = rotation_of(&a[k]) * rotation_of(&rest_s[k]).inverse();
                let turn_t = rotation_of(&b[j]) * rotation_of(&rest_t[j]).inverse();
                worst = worst.max(angle(turn_s, turn_t));
            }
        }
    }
    assert!(worst <= 1e-5, "{worst} rad");
}

#[test]
fn a_rest_override_turns_the_reference_pose() {
    // The variant's arms are raised 0.6 rad in its rest; overriding its rest with the
    // mannequin's A-pose makes the retargeted arms hang as the source's again.
    let s = mannequin::skeleton();
    let t = variant(1.0, 0.6);
    let clip = walk(&s);
    let map = BoneMap::humanoid(&s, &t).unwrap();
    let plain = Retargeter::new(&s, &t, &map, &RetargetOptions::default()).unwrap();
    let options = RetargetOptions::default()
        .with_target_rest("mixamorig:LeftArm", Quat::IDENTITY)
        .with_target_rest("mixamorig:RightArm", Quat::IDENTITY);
    let fixed = Retargeter::new(&s, &t, &map, &options).unwrap();
    let (sf, st) = (
        s.joint_index("upperarm_l").unwrap(),
        s.joint_index("lowerarm_l").unwrap(),
    );
    let (tf, tt) = (
        t.joint_index("mixamorig:LeftArm").unwrap(),
        t.joint_index("mixamorig:LeftForeArm").unwrap(),
    );
    let direction = |m: &[DMat4], x: usize, y: usize| (m[y].w_axis - m[x].w_axis).truncate().normalize();
    let time = clip.duration * 0.3;
    let a = model(&s, &clip, time);
    let off = model(&t, &plain.retarget(&clip).unwrap(), time);
    let on = model(&t, &fixed.retarget(&clip).unwrap(), time);
    let want = direction(&a, sf, st);
    assert!(direction(&off, tf, tt).angle_between(want) > 0.5);
    assert!(direction(&on, tf, tt).angle_between(want) < 1e-3);
}

fn refusal(map: &BoneMap, options: &RetargetOptions) -> String {
    let (s, t) = (mannequin::skeleton(), variant(1.2, 0.0));
    match Retargeter::new(&s, &t, map, options) {
        Err(e @ Error::Retarget { .. }) => e.to_string(),
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn maps_that_break_the_rules_are_refused_naming_the_joints() {
    let (s, t) = (mannequin::skeleton(), variant(1.2, 0.0));
    let good = BoneMap::humanoid(&s, &t).unwrap();
    let none = RetargetOptions::default();
    let cases: Vec<(BoneMap, RetargetOptions, &[&str])> = vec![
        (
            good.clone().set("mixamorig:Tail", "pelvis").clone(),
            none.clone(),
            &["mixamorig:Tail", "does not have"],
        ),
        (
            good.clone().set("mixamorig:Hips", "tail").clone(),
            none.clone(),
            &["'tail'", "mixamorig:Hips"],
        ),
        (
            good.clone().set("mixamorig:LeftLeg", "calf_r").clone(),
            none.clone(),
            &["mixamorig:LeftLeg", "mixamorig:RightLeg", "calf_r"],
        ),
        (
            good.clone()
                .set("mixamorig:LeftLeg", "thigh_r")
                .remove("mixamorig:RightUpLeg")
                .clone(),
            none.clone(),
            &["crosses", "mixamorig:LeftLeg", "thigh_r", "thigh_l"],
        ),
        (
            good.clone().remove("mixamorig:Hips").clone(),
            none.clone(),
            &["two retarget roots", "mixamorig:Spine", "mixamorig:LeftUpLeg"],
        ),
        (BoneMap::new(), none.clone(), &["maps no joint"]),
        (
            good.clone(),
            none.clone().with_target_rest("nope", Quat::IDENTITY),
            &["'nope'"],
        ),
        (
            good.clone(),
            none.clone()
                .with_source_rest("upperarm_l", Quat::from_xyzw(0.0, 0.0, 0.0, 2.0)),
            &["upperarm_l", "unit quaternion"],
        ),
        (good, none.with_target_skinned(vec![999]), &["999"]),
    ];
    for (map, options, words) in cases {
        let message = refusal(&map, &options);
        for w in words {
            assert!(message.contains(w), "'{message}' lacks '{w}'");
        }
    }
}

#[test]
fn the_humanoid_profile_needs_a_known_skeleton() {
    let odd = Skeleton::from_rest_pose(
        "odd",
        vec![
            ("a".into(), None, Default::default()),
            ("b".into(), Some(0), Default::default()),
        ],
    )
    .unwrap();
    let e = BoneMap::humanoid(&mannequin::skeleton(), &odd).unwrap_err().to_string();
    assert!(e.contains("'odd'") && e.contains("entry by entry"), "{e}");
}

#[test]
fn a_json_map_file_overrides_entries_or_is_refused_by_name() {
    let (s, t) = (mannequin::skeleton(), variant(1.2, 0.0));
    let mut map = BoneMap::humanoid(&s, &t).unwrap();
    map.apply_json(
        "map.json",
        r#"{"mixamorig:x_index_01_l": "index_01_l", "mixamorig:Head": null}"#,
    )
    .unwrap();
    assert_eq!(map.source_of("mixamorig:x_index_01_l"), Some("index_01_l"));
    assert_eq!(map.source_of("mixamorig:Head"), None);
    Retargeter::new(&s, &t, &map, &RetargetOptions::default()).unwrap();
    let before = map.clone();
    let e = map.apply_json("broken.json", r#"["Hips"]"#).unwrap_err().to_string();
    assert!(e.starts_with("broken.json: "), "{e}");
    assert_eq!(map, before);
}

#[test]
fn the_comparisons_see_a_wrong_clip() {
    // The checks above would fail on a retarget that dropped a joint or kept the hips unscaled.
    let s = mannequin::skeleton();
    let t = variant(1.3, 0.0);
    let clip = walk(&s);
    let r = Retargeter::new(&s, &t, &BoneMap::humanoid(&s, &t).unwrap(), &RetargetOptions::default()).unwrap();
    let mut out = r.retarget(&clip).unwrap();
    let (root, source_root) = r.retarget_root();
    let time = clip.duration * 0.5;
    let right = model(&t, &out, time)[root].w_axis.y;
    let hips = out.tracks.iter_mut().find(|k| k.joint == "mixamorig:Hips").unwrap();
    for v in &mut hips.translation.as_mut().unwrap().values {
        *v /= r.height_ratio() as f32;
    }
    let wrong = model(&t, &out, time)[root].w_axis.y;
    let want = model(&s, &clip, time)[source_root].w_axis.y * r.height_ratio();
    assert!(
        (right - want).abs() < 1e-5 && (wrong - want).abs() > 1e-2,
        "{right} {wrong} {want}"
    );
    let _ = Vec3::ZERO;
}

#[test]
fn the_constant_form_agrees_with_model_space() {
    // Steps 1 and 2 of the reference: the run-time form (two products per joint, f32) against
    // the offline one (f64), within 1e-5 rad, with unmapped joints between mapped ones (the
    // CMU's LHipJoint and Neck1, the mannequin's root) and a rest override.
    let (cmu_skeleton, cmu_clip, _) = cmu();
    let m = mannequin::skeleton();
    let cases = [
        (m.clone(), variant(1.3, 0.6), walk(&m), RetargetOptions::default()),
        (
            cmu_skeleton.clone(),
            m.clone(),
            cmu_clip.clone(),
            RetargetOptions::default(),
        ),
        (
            m.clone(),
            cmu_skeleton,
            walk(&m),
            RetargetOptions::default().with_source_rest("upperarm_l", Quat::from_rotation_z(0.5)),
        ),
    ];
    for (s, t, clip, options) in cases {
        let r = Retargeter::new(&s, &t, &BoneMap::humanoid(&s, &t).unwrap(), &options).unwrap();
        let constants = r.joint_constants();
        assert_eq!(constants.iter().flatten().count(), 22);
        let sampler = ClipSampler::new(&s, &clip);
        let mut worst = 0.0f64;
        for time in key_times(&clip).into_iter().step_by(5) {
            let local = sampler.sample(f64::from(time));
            let exact = r.target_pose(&local);
            let quats: Vec<Quat> = local.iter().map(|l| l.rotation.as_quat()).collect();
            let fast = r.target_rotations(&constants, &quats);
            for (e, f) in exact.iter().zip(&fast) {
                worst = worst.max(angle(e.rotation, f.as_dquat()));
            }
        }
        assert!(worst <= 1e-5, "{} onto {}: {worst} rad", s.name(), t.name());
    }
}

#[test]
fn a_retargeted_take_compresses_and_builds_into_a_library() {
    use wgpu_anim::offline::compress::{self, CompressionSettings};
    let (s, clip, skinned) = cmu();
    let t = mannequin::skeleton();
    let options = RetargetOptions::default().with_source_skinned(skinned);
    let r = Retargeter::new(&s, &t, &BoneMap::humanoid(&s, &t).unwrap(), &options).unwrap();
    let out = r.retarget(&clip).unwrap();
    let settings = CompressionSettings::default();
    let (compressed, report) = compress::compress(&t, &out, &settings).unwrap();
    eprintln!(
        "{} B raw, {} B compressed, worst {:.4} cm",
        report.raw_bytes, report.compressed_bytes, report.max_error_cm
    );
    assert!(report.compressed_bytes * 4 < report.raw_bytes);
    assert!(
        report.max_error_cm <= settings.threshold_cm * 1.001,
        "{} cm",
        report.max_error_cm
    );
    let mut builder = wgpu_anim::LibraryBuilder::new();
    let skeleton = builder.add_skeleton(t.clone());
    let mut raw = out.clone();
    raw.name = format!("{} (raw)", out.name);
    builder.add_clip(skeleton, &raw).unwrap();
    builder.add_compressed_clip(skeleton, &compressed).unwrap();
    assert_eq!(builder.build().clips().len(), 2);
}

#[test]
fn short_or_foreign_inputs_give_a_pose_not_a_panic() {
    let s = mannequin::skeleton();
    let t = variant(1.2, 0.0);
    let r = Retargeter::new(&s, &t, &BoneMap::humanoid(&s, &t).unwrap(), &RetargetOptions::default()).unwrap();
    // Too few source joints: the rest stands for the missing ones.
    let rest = reference::sample(&s, &Clip::rest_pose("rest", 1.0), 0.0);
    let full = r.target_pose(&rest);
    let short = r.target_pose(&rest[..3]);
    assert_eq!(short.len(), t.joint_count());
    for (a, b) in full.iter().zip(&short) {
        assert!(angle(a.rotation, b.rotation) < 1e-9);
    }
    // Constants of another pair, naming joints this source lacks.
    let mut constants = r.joint_constants();
    constants.push(constants[1]);
    if let Some(c) = constants[1].as_mut() {
        c.source = 10_000;
    }
    assert_eq!(r.target_rotations(&constants, &[]).len(), constants.len());
}

#[test]
fn foot_goals_keep_planted_feet_planted() {
    // The mannequin's walk moving at its speed (root motion kept on its root joint) onto a
    // long-legged and a short character, feet on goals (the reference's step 4): where a source
    // foot is planted (it moves under 1 % of the walking speed between two keys), the target's
    // moves under 1 % of the target's walking speed. Without goals the short one's feet slide.
    let m = mannequin::skeleton();
    let walk = mannequin::clips_with_root_motion(&m)
        .into_iter()
        .find(|c| c.name == "walk")
        .unwrap();
    let times = key_times(&walk);
    let source_feet = [m.joint_index("foot_l").unwrap(), m.joint_index("foot_r").unwrap()];
    let position = |s: &Skeleton, clip: &Clip, t: f32, j: usize| model(s, clip, t)[j].w_axis.truncate();
    let speed_s = {
        let root = m.joint_index("root").unwrap();
        (position(&m, &walk, walk.duration, root) - position(&m, &walk, 0.0, root)).length() / f64::from(walk.duration)
    };
    assert!(speed_s > 0.5, "the walk moves: {speed_s} m/s");
    for legs in [1.35, 0.7] {
        let t = variant(legs, 0.0);
        let feet = humanoid_feet(&t).unwrap();
        let target_feet = [t.joint_index(&feet[0]).unwrap(), t.joint_index(&feet[1]).unwrap()];
        let map = BoneMap::humanoid(&m, &t).unwrap();
        // The hip heights above the feet (the root joint at the origin carries no mesh).
        let body = |s: &Skeleton| (1..s.joint_count()).collect::<Vec<_>>();
        let options = RetargetOptions::default()
            .with_source_skinned(body(&m))
            .with_target_skinned(body(&t));
        let mut worst = [0.0f64; 2];
        let mut planted = 0;
        for (k, options) in [options.clone(), options.with_goal(&feet[0]).with_goal(&feet[1])]
            .into_iter()
            .enumerate()
        {
            let r = Retargeter::new(&m, &t, &map, &options).unwrap();
            let clip = r.retarget(&walk).unwrap();
            let speed_t = speed_s * r.height_ratio();
            for pair in times.windows(2) {
                let dt = f64::from(pair[1] - pair[0]);
                for (&fs, &ft) in source_feet.iter().zip(&target_feet) {
                    let vs = (position(&m, &walk, pair[1], fs) - position(&m, &walk, pair[0], fs)).length() / dt;
                    if vs >= 0.01 * speed_s {
                        continue;
                    }
                    planted += 1;
                    let vt = (position(&t, &clip, pair[1], ft) - position(&t, &clip, pair[0], ft)).length() / dt;
                    worst[k] = worst[k].max(vt / speed_t);
                }
            }
        }
        assert!(planted > 4, "legs {legs}: {planted} planted spans");
        assert!(
            worst[1] < 0.01,
            "legs {legs}: a planted foot moves {:.4} of the walking speed with goals",
            worst[1]
        );
        println!(
            "legs {legs}: planted feet move {:.4} of the walking speed without goals, {:.6} with",
            worst[0], worst[1]
        );
    }
}

fn knight() -> (Skeleton, Vec<usize>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/knight/knight.glb");
    let imported = gltf_import::load(&path).expect("the knight imports");
    let s = imported.skeletons.into_iter().next().expect("one skeleton");
    (s.skeleton, s.skin_joints)
}

#[test]
fn a_second_real_humanoid_plays_the_mannequins_clips() {
    // The Animated Knight (a game control rig of 50 joints whose nodes hold a pose, not its bind
    // pose: stood in its bind pose's rotations) plays the mannequin's walk by the humanoid
    // profile: its hips stand at its proportional height, steps 1 and 2 agree, and it is
    // upright (its head above its hips, its feet below) at every key.
    let m = mannequin::skeleton();
    let (k, skinned) = knight();
    let map = BoneMap::humanoid(&m, &k).unwrap();
    assert_eq!(map.source_of("body_ctrl"), Some("pelvis"));
    assert_eq!(map.len(), 20, "no shoulders");
    let options = RetargetOptions::default()
        .with_target_skinned(skinned.clone())
        .with_target_bind_rest();
    let r = Retargeter::new(&m, &k, &map, &options).unwrap();
    let (root, source_root) = r.retarget_root();
    assert_eq!(k.joint_names()[root], "body_ctrl");
    let walk = walk(&m);
    let out = r.retarget(&walk).unwrap();
    let constants = r.joint_constants();
    let sampler = ClipSampler::new(&m, &walk);
    let (head, foot) = (k.joint_index("skull").unwrap(), k.joint_index("foot_l").unwrap());
    let h_t = {
        let rest = reference::local_to_model(&k, &reference::sample(&k, &Clip::rest_pose("rest", 1.0), 0.0));
        let lowest = skinned.iter().map(|&j| rest[j].w_axis.y).fold(f64::INFINITY, f64::min);
        rest[root].w_axis.y - lowest
    };
    let (mut height, mut steps) = (0.0f64, 0.0f64);
    for time in key_times(&walk) {
        let want = model(&m, &walk, time)[source_root].w_axis.y * r.height_ratio();
        let pose = model(&k, &out, time);
        height = height.max((want - pose[root].w_axis.y).abs());
        assert!(
            pose[head].w_axis.y > pose[root].w_axis.y && pose[foot].w_axis.y < pose[root].w_axis.y,
            "at {time}: upright"
        );
        let local = sampler.sample(f64::from(time));
        let exact = r.target_pose(&local);
        let quats: Vec<Quat> = local.iter().map(|l| l.rotation.as_quat()).collect();
        for (e, f) in exact.iter().zip(r.target_rotations(&constants, &quats)) {
            steps = steps.max(angle(e.rotation, f.as_dquat()));
        }
    }
    assert!(height <= 1e-4 * h_t, "hips {height} of {h_t}");
    assert!(steps <= 1e-5, "steps 1 and 2: {steps} rad");
}
