//! Ids belong to the library that issued them: every public function that takes a clip, blend
//! tree, mask or skeleton id refuses one of another library — or of the same assets built again —
//! with an error naming it, and takes its own library's.

mod common;

use std::sync::Arc;
use wgpu_anim::blend::{BlendNode, BlendTree};
use wgpu_anim::gpu::{Controller, Layer, LayerMode, Transition};
use wgpu_anim::mannequin::{self, layer_assets};
use wgpu_anim::offline::compress::{CompressionSettings, compress};
use wgpu_anim::offline::compressed_file::CompressedFile;
use wgpu_anim::offline::root_motion::RootMotion;
use wgpu_anim::{AnimationLibrary, Animator, Error, IdKind, InstanceDesc, LibraryBuilder, LibraryTag, cpu};

/// The built-in library's ids: the locomotion tree, the right-arm mask, the wave clip, the skeleton.
struct Ids {
    lib: Arc<AnimationLibrary>,
    walk: wgpu_anim::ClipId,
    wave: wgpu_anim::ClipId,
    tree: wgpu_anim::BlendTreeId,
    mask: wgpu_anim::MaskId,
    skeleton: wgpu_anim::SkeletonId,
}

fn built_in() -> Ids {
    let (lib, skeleton, clips) = mannequin::library();
    Ids {
        walk: clips[1],
        wave: lib.clip_id(skeleton, layer_assets::WAVE).unwrap(),
        tree: lib.blend().tree_id(mannequin::LOCOMOTION).unwrap(),
        mask: lib.mask_id(layer_assets::RIGHT_ARM).unwrap(),
        skeleton,
        lib: Arc::new(lib),
    }
}

/// `result` is [`Error::ForeignId`] for `kind` `index` of library `issuer` given to `library`, and
/// says so.
#[track_caller]
fn assert_foreign<T: std::fmt::Debug>(
    result: wgpu_anim::Result<T>,
    kind: IdKind,
    index: u32,
    issuer: LibraryTag,
    library: LibraryTag,
) {
    let e = result.expect_err("an id of another library must be refused");
    let want = format!(
        "{kind} {index} belongs to another library (library {}), not this one (library {})",
        issuer.get(),
        library.get()
    );
    assert_eq!(e.to_string(), want);
    let Error::ForeignId(f) = e else { panic!("{e:?}") };
    assert_eq!((f.kind, f.index, f.issuer, f.library), (kind, index, issuer, library));
}

/// A controller of a few mannequins of `lib`, the first playing `clip`.
fn controller(lib: &Arc<AnimationLibrary>, clip: wgpu_anim::ClipId) -> Controller {
    let mut c = Controller::new(lib.clone(), 4, &[(4, 4 * 64)]).unwrap();
    c.add_instance(&InstanceDesc::new(clip)).unwrap();
    c
}

#[test]
fn a_library_built_again_has_a_new_tag_and_refuses_the_old_ids() {
    let (old, old_skeleton, old_clips) = mannequin::library();
    let new = built_in();
    let (a, b) = (old.tag(), new.lib.tag());
    assert_ne!(a, b, "the same builder input, built again, is another library");
    assert_eq!(old.clone().tag(), a, "a clone of a built library is the same library");
    // The same indices, refused; its own ids taken.
    assert_eq!(old_clips[1].index(), new.walk.index());
    assert_foreign(new.lib.clip_duration(old_clips[1]), IdKind::Clip, 1, a, b);
    assert!(new.lib.clip_duration(new.walk).is_ok());
    assert_foreign(new.lib.clip_id(old_skeleton, "walk"), IdKind::Skeleton, 0, a, b);
    // Looked up again, by name or by index, they work.
    let again = new.lib.clip_id(new.skeleton, &old.clip_names()[1]).unwrap();
    assert_eq!(again, new.walk);
    assert_eq!(new.lib.clip_at(old_clips[1].index()), Some(new.walk));
    assert_eq!(new.lib.clip_at(new.lib.clips().len() as u32), None);
    // A cloned builder is a new library too.
    let mut builder = LibraryBuilder::new();
    let s = builder.add_skeleton(mannequin::skeleton());
    let copy = builder.clone();
    assert_ne!(copy.tag(), builder.tag());
    assert_foreign(copy.skeleton(s), IdKind::Skeleton, 0, builder.tag(), copy.tag());
    assert!(builder.skeleton(s).is_ok());
}

#[test]
fn the_controller_refuses_ids_of_another_library_and_changes_nothing() {
    let this = built_in();
    let other = built_in();
    let (mine, theirs) = (this.lib.tag(), other.lib.tag());
    let mut c = controller(&this.lib, this.walk);
    let before = *c.instance(0).unwrap();

    // Starting: a clip, a tree.
    assert_foreign(
        c.add_instance(&InstanceDesc::new(other.walk)),
        IdKind::Clip,
        1,
        theirs,
        mine,
    );
    let tree = other.tree.index();
    assert_foreign(
        c.add_instance(&InstanceDesc::tree(other.tree, [0.0; 4])),
        IdKind::BlendTree,
        tree,
        theirs,
        mine,
    );
    assert_eq!(c.instance_count(), 1, "nothing added");
    // Replacing and cross-fading.
    assert_foreign(
        c.set_instance(0, &InstanceDesc::new(other.wave)),
        IdKind::Clip,
        other.wave.index(),
        theirs,
        mine,
    );
    assert_foreign(
        c.play(0, &InstanceDesc::new(other.walk), Some(Transition::linear(0.3))),
        IdKind::Clip,
        1,
        theirs,
        mine,
    );
    assert_foreign(
        c.play(0, &InstanceDesc::tree(other.tree, [0.0, 1.0, 0.0, 0.0]), None),
        IdKind::BlendTree,
        tree,
        theirs,
        mine,
    );
    // Layering: a clip, a tree, a mask.
    assert_foreign(
        c.set_layer(0, 0, Some(&Layer::clip(LayerMode::Override, other.wave)), false),
        IdKind::Clip,
        other.wave.index(),
        theirs,
        mine,
    );
    assert_foreign(
        c.set_layer(0, 1, Some(&Layer::tree(LayerMode::AdditiveMesh, other.tree)), false),
        IdKind::BlendTree,
        tree,
        theirs,
        mine,
    );
    let masked = Layer::clip(LayerMode::Override, this.wave).with_mask(Some(other.mask));
    assert_foreign(
        c.set_layer(0, 0, Some(&masked), false),
        IdKind::Mask,
        other.mask.index(),
        theirs,
        mine,
    );
    assert_eq!(*c.instance(0).unwrap(), before, "the instance is unchanged");
    assert!(c.layer_defs().is_empty(), "no layer definition was added");

    // Its own library's ids work everywhere.
    c.add_instance(&InstanceDesc::tree(this.tree, [0.0, 1.0, 0.0, 0.0]))
        .unwrap();
    c.set_instance(1, &InstanceDesc::new(this.wave)).unwrap();
    c.play(0, &InstanceDesc::new(this.wave), Some(Transition::linear(0.3)))
        .unwrap();
    c.play(0, &InstanceDesc::tree(this.tree, [0.0; 4]), None).unwrap();
    let layer = Layer::clip(LayerMode::Override, this.wave).with_mask(Some(this.mask));
    c.set_layer(0, 0, Some(&layer), false).unwrap();
    c.set_layer(0, 1, Some(&Layer::tree(LayerMode::Override, this.tree)), false)
        .unwrap();
    assert_eq!(
        c.instance(1).unwrap().clip,
        this.wave.index(),
        "the GPU struct holds the index"
    );
}

#[test]
fn the_library_and_the_cpu_mirror_refuse_ids_of_another_library() {
    let this = built_in();
    let other = built_in();
    let (lib, mine, theirs) = (&this.lib, this.lib.tag(), other.lib.tag());
    let clip = other.walk;
    let k = clip.index();
    assert_foreign(cpu::clip_instance(lib, clip, 0), IdKind::Clip, k, theirs, mine);
    assert_foreign(cpu::pose_at(lib, clip, 0.2), IdKind::Clip, k, theirs, mine);
    assert_foreign(lib.clip_header(clip), IdKind::Clip, k, theirs, mine);
    assert_foreign(lib.clip_duration(clip), IdKind::Clip, k, theirs, mine);
    assert_foreign(lib.clip_events(clip), IdKind::Clip, k, theirs, mine);
    assert_foreign(lib.clip_skeleton(clip), IdKind::Clip, k, theirs, mine);
    assert_foreign(lib.has_root_motion(clip), IdKind::Clip, k, theirs, mine);
    assert_foreign(lib.clip_id(other.skeleton, "walk"), IdKind::Skeleton, 0, theirs, mine);
    let tree = other.tree.index();
    assert_foreign(lib.blend().tree(other.tree), IdKind::BlendTree, tree, theirs, mine);
    assert_foreign(
        lib.blend().tree_nodes(other.tree),
        IdKind::BlendTree,
        tree,
        theirs,
        mine,
    );

    // Its own ids.
    assert_eq!(cpu::clip_instance(lib, this.walk, 0).unwrap().clip, 1);
    assert!(cpu::pose_at(lib, this.walk, 0.2).is_ok());
    assert_eq!(lib.clip_skeleton(this.walk).unwrap(), this.skeleton);
    assert!(lib.clip_duration(this.walk).unwrap() > 0.0);
    assert!(
        !lib.clip_events(this.walk).unwrap().is_empty(),
        "the walk has foot-down events"
    );
    assert!(!lib.has_root_motion(this.walk).unwrap());
    assert!(!lib.blend().tree_nodes(this.tree).unwrap().is_empty());
    assert_eq!(lib.blend().tree_at(this.tree.index()), Some(this.tree));
    assert_eq!(lib.mask_at(this.mask.index()), Some(this.mask));
    assert_eq!(lib.skeleton_at(0), Some(this.skeleton));
    // Ids name themselves and their library.
    assert_eq!(this.walk.to_string(), format!("clip 1 of library {}", mine.get()));
}

#[test]
fn the_builder_refuses_ids_of_another_builder_or_library() {
    let other = built_in();
    let theirs = other.lib.tag();
    let skeleton = mannequin::skeleton();
    let clips = mannequin::clips(&skeleton);
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skeleton.clone());
    let mine = b.tag();
    // A skeleton of another library, for a clip, a compressed clip, root motion, a mask.
    let foreign = other.skeleton;
    assert_foreign(b.skeleton(foreign), IdKind::Skeleton, 0, theirs, mine);
    assert_foreign(b.add_clip(foreign, &clips[0]), IdKind::Skeleton, 0, theirs, mine);
    let (compressed, _) = compress(&skeleton, &clips[0], &CompressionSettings::default()).unwrap();
    assert_foreign(
        b.add_compressed_clip(foreign, &compressed),
        IdKind::Skeleton,
        0,
        theirs,
        mine,
    );
    let file = CompressedFile {
        skeleton: skeleton.name().to_string(),
        joints: skeleton.joint_names().to_vec(),
        clips: vec![compressed],
    };
    assert_foreign(file.add_to(&mut b, foreign), IdKind::Skeleton, 0, theirs, mine);
    assert_foreign(
        b.add_clip_with_root_motion(foreign, &clips[1], &RootMotion::default()),
        IdKind::Skeleton,
        0,
        theirs,
        mine,
    );
    let weights = vec![1.0; skeleton.joint_count()];
    assert_foreign(b.add_mask(foreign, "all", &weights), IdKind::Skeleton, 0, theirs, mine);
    // A tree over a clip of another library names the node and the clip.
    let idle = b.add_clip(s, &clips[0]).unwrap();
    let tree = |clip| BlendTree {
        name: "pair".into(),
        nodes: vec![
            BlendNode::Blend1D {
                parameter: 0,
                children: vec![(0.0, 1), (1.0, 2)],
            },
            BlendNode::Clip(idle),
            BlendNode::Clip(clip),
        ],
        root: 0,
    };
    let e = b.add_blend_tree(&tree(other.walk)).unwrap_err().to_string();
    let want = format!(
        "blend tree 'pair': node 2: clip 1 belongs to another library (library {}), not this one (library {})",
        theirs.get(),
        mine.get()
    );
    assert_eq!(e, want);

    // Its own ids work, and the library built keeps its tag.
    let walk = b.add_clip(s, &clips[1]).unwrap();
    let settings = CompressionSettings::default();
    let (run, _) = compress(&skeleton, &clips[2], &settings).unwrap();
    assert_eq!(b.add_compressed_clip(s, &run).unwrap().library(), mine);
    let (backward, _) = compress(&skeleton, &clips[3], &settings).unwrap();
    let file = CompressedFile {
        clips: vec![backward],
        ..file
    };
    assert_eq!(file.add_to(&mut b, s).unwrap().len(), 1);
    b.add_clip_with_root_motion(s, &clips[4], &RootMotion::default())
        .unwrap();
    let tree_id = b.add_blend_tree(&tree(walk)).unwrap();
    let mask = b.add_mask(s, "all", &weights).unwrap();
    assert!(b.skeleton(s).is_ok());
    let lib = b.build();
    assert_eq!(lib.tag(), mine);
    assert_eq!(walk.library(), mine);
    assert!(lib.blend().tree_nodes(tree_id).is_ok());
    assert_eq!(lib.mask_at(mask.index()), Some(mask));
}

#[test]
fn the_animator_and_gpu_tools_refuse_ids_of_another_library() {
    let (device, queue) = common::device();
    let this = built_in();
    let other = built_in();
    let (mine, theirs) = (this.lib.tag(), other.lib.tag());
    let mut a = Animator::new(&device, &this.lib, &Default::default()).unwrap();
    let controller = a.controller_mut();
    assert_foreign(
        controller.add_instance(&InstanceDesc::new(other.walk)),
        IdKind::Clip,
        1,
        theirs,
        mine,
    );
    controller.add_instance(&InstanceDesc::new(this.walk)).unwrap();
    assert_foreign(
        controller.play(0, &InstanceDesc::new(other.wave), Some(Transition::linear(0.2))),
        IdKind::Clip,
        other.wave.index(),
        theirs,
        mine,
    );
    assert_foreign(
        wgpu_anim::testing::evaluate_poses(&device, &queue, &this.lib, &[(this.walk, 0.1), (other.walk, 0.1)]),
        IdKind::Clip,
        1,
        theirs,
        mine,
    );
    let poses = wgpu_anim::testing::evaluate_poses(&device, &queue, &this.lib, &[(this.walk, 0.1)]).unwrap();
    assert_eq!(poses.len(), 1);
}

#[cfg(feature = "scene")]
#[test]
fn a_scene_character_refuses_a_clip_of_another_library() {
    let c = wgpu_anim::scene::Character::mannequin();
    let other = built_in();
    assert_foreign(
        c.posed_bounds(other.walk, 0.0),
        IdKind::Clip,
        1,
        other.lib.tag(),
        c.library.tag(),
    );
    assert!(c.posed_bounds(c.clips[1], 0.0).is_ok());
}
