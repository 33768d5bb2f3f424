"""cthreads/config.py: parsing and checking the environment variables, overriding them, and the
readers that take their settings from it (no device needed)."""

from __future__ import annotations

import dataclasses
import os
from types import SimpleNamespace

import pytest

from cthreads import config
from cthreads.errors import GpuInvalidArgument, VulkanNoDevice

HOME = {"HOME": "/home/someone"}


def parse(**variables) -> config.Config:
    return config.from_environ(dict(HOME, **variables))


@pytest.fixture
def clean_env(monkeypatch):
    """No CTHREADS_ variable set; config re-read around the test."""
    for var in config.VARIABLES.values():
        monkeypatch.delenv(var, raising=False)
    config.reload()
    yield monkeypatch
    monkeypatch.undo()
    config.reload()


def test_defaults():
    cfg = parse()
    assert (cfg.adapter, cfg.workgroup_size, cfg.coarsen, cfg.vec, cfg.batch,
            cfg.native_encoder, cfg.device_memory) == ("", None, None, True, True, True, None)
    assert cfg.cache_dir == "/home/someone/.cache/cthreads"
    assert cfg.problems() == [] and cfg.check() is cfg


def test_every_field_has_its_variable():
    assert set(config.VARIABLES) | set(config.OVERRIDE_ONLY) == \
        {f.name for f in dataclasses.fields(config.Config)}
    assert not set(config.VARIABLES) & set(config.OVERRIDE_ONLY)
    assert all(v.startswith("CTHREADS_") for v in config.VARIABLES.values())


def test_dump_wgsl_is_read_from_its_variable():
    assert parse().dump_wgsl == ""
    assert parse(CTHREADS_DUMP_WGSL=" /tmp/wgsl ").dump_wgsl == "/tmp/wgsl"


def test_test_settings_have_no_variable_and_are_checked():
    assert "nd_tiles_on_cpu" not in config.VARIABLES
    assert parse().nd_tiles_on_cpu is False
    with config.override(nd_tiles_on_cpu=True):
        assert config.current().nd_tiles_on_cpu is True
    with pytest.raises(GpuInvalidArgument, match="nd_tiles_on_cpu='yes'"):
        config.current().replace(nd_tiles_on_cpu="yes")


@pytest.mark.parametrize("size", [32, 64, 128, 256, 512, 1024])
def test_workgroup_sizes_accepted(size):
    assert parse(CTHREADS_WORKGROUP_SIZE=f" {size} ").workgroup_size == size


@pytest.mark.parametrize("factor", [1, 2, 4, 8])
def test_coarsen_factors_accepted(factor):
    assert parse(CTHREADS_COARSEN=str(factor)).coarsen == factor


@pytest.mark.parametrize("var, field, value, accepted", [
    ("CTHREADS_WORKGROUP_SIZE", "workgroup_size", "100", "use 32, 64, 128, 256, 512 or 1024"),
    ("CTHREADS_WORKGROUP_SIZE", "workgroup_size", "2048", "use 32, 64, 128, 256, 512 or 1024"),
    ("CTHREADS_WORKGROUP_SIZE", "workgroup_size", "wide", "use 32, 64, 128, 256, 512 or 1024"),
    ("CTHREADS_COARSEN", "coarsen", "3", "use 1, 2, 4 or 8"),
    ("CTHREADS_COARSEN", "coarsen", "0", "use 1, 2, 4 or 8"),
    ("CTHREADS_COARSEN", "coarsen", "2.0", "use 1, 2, 4 or 8"),
    ("CTHREADS_VEC", "vec", "no", "use 0 (off) or 1 (on, the default)"),
    ("CTHREADS_BATCH", "batch", "false", "use 0 (off) or 1 (on, the default)"),
    ("CTHREADS_NATIVE_ENCODER", "native_encoder", "2", "use 0 (off) or 1 (on, the default)"),
    ("CTHREADS_DEVICE_MEMORY", "device_memory", "lots", "give a size in bytes"),
    ("CTHREADS_DEVICE_MEMORY", "device_memory", "-1G", "give a size in bytes"),
])
def test_a_bad_value_raises_where_its_setting_is_read(var, field, value, accepted):
    cfg = parse(**{var: value})                       # parsing never raises
    with pytest.raises(GpuInvalidArgument) as info:
        getattr(cfg, field)
    assert str(info.value) == f"{var}={value!r}: {accepted}, " \
        f"{'such as 1073741824, 512M or 2G, ' if field == 'device_memory' else ''}or unset it"
    others = [f.name for f in dataclasses.fields(cfg) if f.name != field]
    assert {name: getattr(cfg, name) for name in others} == \
        {name: getattr(parse(), name) for name in others}      # the other settings still read
    assert cfg.problems() == [str(info.value)]
    assert f"{field}=<invalid: {var}=" in repr(cfg)


def test_check_lists_every_bad_value():
    cfg = parse(CTHREADS_COARSEN="3", CTHREADS_VEC="yes")
    with pytest.raises(GpuInvalidArgument, match=r"CTHREADS_COARSEN='3'.*; CTHREADS_VEC='yes'"):
        cfg.check()


@pytest.mark.parametrize("var, field", [("CTHREADS_VEC", "vec"), ("CTHREADS_BATCH", "batch"),
                                        ("CTHREADS_NATIVE_ENCODER", "native_encoder")])
def test_switches(var, field):
    assert getattr(parse(**{var: "0"}), field) is False
    assert getattr(parse(**{var: " 0 "}), field) is False
    assert getattr(parse(**{var: "1"}), field) is True
    assert getattr(parse(**{var: ""}), field) is True


def test_device_memory_sizes():
    assert parse(CTHREADS_DEVICE_MEMORY="512M").device_memory == 512 << 20
    assert parse(CTHREADS_DEVICE_MEMORY="2G").device_memory == 2 << 30
    assert parse(CTHREADS_DEVICE_MEMORY="1.5KiB").device_memory == 1536
    assert parse(CTHREADS_DEVICE_MEMORY="1048576").device_memory == 1 << 20


def test_parse_bytes():
    assert config.parse_bytes("512M") == 512 << 20 and config.parse_bytes("2G") == 2 << 30
    assert config.parse_bytes("1048576") == 1 << 20 and config.parse_bytes("1.5KiB") == 1536
    assert config.parse_bytes("3t") == 3 << 40 and config.parse_bytes("10b") == 10
    for bad in ("lots", "", "-5", "nan", "1X"):
        with pytest.raises(ValueError):
            config.parse_bytes(bad)


def test_cache_dir_precedence():
    assert parse(CTHREADS_CACHE_DIR=" /tmp/c ", XDG_CACHE_HOME="/x").cache_dir == "/tmp/c"
    assert parse(XDG_CACHE_HOME="/x").cache_dir == os.path.join("/x", "cthreads")
    assert parse(XDG_CACHE_HOME="  ").cache_dir == "/home/someone/.cache/cthreads"


def test_adapter_is_stripped():
    assert parse(CTHREADS_ADAPTER="  H200 ").adapter == "H200"


def test_config_is_frozen():
    cfg = parse()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.coarsen = 2
    assert cfg.coarsen is None


def test_current_follows_the_environment(clean_env):
    first = config.current()
    assert config.current() is first                 # parsed once while nothing changes
    clean_env.setenv("CTHREADS_COARSEN", "4")
    assert config.current().coarsen == 4
    clean_env.setenv("CTHREADS_COARSEN", "5")
    with pytest.raises(GpuInvalidArgument, match="CTHREADS_COARSEN='5'"):
        config.current().coarsen
    assert config.current().vec is True
    clean_env.delenv("CTHREADS_COARSEN")
    assert config.current() == first
    assert config.reload() == first and config.reload() is not first


def test_override(clean_env):
    clean_env.setenv("CTHREADS_BATCH", "0")
    with config.override(coarsen=2, vec=False) as cfg:
        assert config.current() is cfg
        assert (cfg.coarsen, cfg.vec, cfg.batch) == (2, False, False)   # the rest as in force
        with config.override(coarsen=None):
            assert (config.current().coarsen, config.current().vec) == (None, False)
        assert config.current().coarsen == 2
        clean_env.setenv("CTHREADS_COARSEN", "8")    # the override wins over the environment
        assert config.current().coarsen == 2
    assert config.current().coarsen == 8 and config.current().vec is True


def test_override_ends_on_an_exception(clean_env):
    with pytest.raises(KeyError):
        with config.override(workgroup_size=512):
            raise KeyError
    assert config.current().workgroup_size is None


@pytest.mark.parametrize("fields, message", [
    ({"coarsen": 3}, "coarsen=3 (the setting of CTHREADS_COARSEN): use None or one of"),
    ({"workgroup_size": "64"}, "workgroup_size='64' (the setting of CTHREADS_WORKGROUP_SIZE)"),
    ({"vec": 0}, "vec=0 (the setting of CTHREADS_VEC): use True or False"),
    ({"device_memory": -1}, "device_memory=-1 (the setting of CTHREADS_DEVICE_MEMORY)"),
    ({"adapter": None}, "adapter=None (the setting of CTHREADS_ADAPTER): use a str"),
    ({"colour": "blue"}, "unknown setting(s) colour; the settings are adapter, "),
])
def test_override_checks_its_values(clean_env, fields, message):
    before = config.current()
    with pytest.raises(GpuInvalidArgument) as info:
        with config.override(**fields):
            pytest.fail("the block ran")
    assert str(info.value).startswith(message)
    assert config.current() is before


# -- readers -------------------------------------------------------------------------------------

def test_workgroup_size_reader(clean_env):
    from cthreads.runtime.variants import choose_workgroup_size

    free = SimpleNamespace(fixed_workgroup_size=False)
    fixed = SimpleNamespace(fixed_workgroup_size=True)
    cpu, gpu = SimpleNamespace(is_cpu=True), SimpleNamespace(is_cpu=False)
    assert (choose_workgroup_size(free, cpu), choose_workgroup_size(free, gpu)) == (64, 256)
    with config.override(workgroup_size=512):
        assert choose_workgroup_size(free, cpu) == 512
        assert choose_workgroup_size(fixed, cpu) == 64
    clean_env.setenv("CTHREADS_WORKGROUP_SIZE", "96")
    with pytest.raises(GpuInvalidArgument, match=r"CTHREADS_WORKGROUP_SIZE='96': use 32, 64"):
        choose_workgroup_size(free, gpu)
    assert choose_workgroup_size(fixed, gpu) == 64    # never read for such kernels


def test_coarsen_and_vec_readers(clean_env):
    from cthreads.runtime.variants import _coarsen_setting, _vec_enabled

    assert (_coarsen_setting(), _vec_enabled()) == (None, True)
    with config.override(coarsen=4, vec=False):
        assert (_coarsen_setting(), _vec_enabled()) == (4, False)
    clean_env.setenv("CTHREADS_VEC", "0")
    clean_env.setenv("CTHREADS_COARSEN", "8")
    assert (_coarsen_setting(), _vec_enabled()) == (8, False)


def test_describe_launches_prints_the_settings(clean_env):
    from cthreads.runtime.variants import describe_launches

    cpu = SimpleNamespace(is_cpu=True)
    plain = describe_launches(cpu)
    assert plain[0].startswith("  workgroup width          64 (")
    assert plain[2].startswith("  four-lane variant        on")
    assert plain[3].startswith("  batched submissions      on: up to ")
    with config.override(workgroup_size=128, coarsen=2, vec=False, batch=False):
        lines = describe_launches(cpu)
    assert lines[0].startswith("  workgroup width          128 (CTHREADS_WORKGROUP_SIZE)")
    assert lines[1] == "  indexes per invocation   2 (CTHREADS_COARSEN)"
    assert lines[2] == "  four-lane variant        off (CTHREADS_VEC=0)"
    assert lines[3] == "  batched submissions      off (CTHREADS_BATCH=0)"
    clean_env.setenv("CTHREADS_COARSEN", "16")
    with pytest.raises(GpuInvalidArgument, match="CTHREADS_COARSEN='16'"):
        describe_launches(cpu)


def test_batching_and_cache_dir_readers(clean_env):
    from cthreads.backend.native.header_cache import cache_dir
    from cthreads.backend.dispatch import batching_enabled

    assert batching_enabled() is True
    with config.override(batch=False, cache_dir="/somewhere"):
        assert batching_enabled() is False and cache_dir() == "/somewhere"
    clean_env.setenv("CTHREADS_BATCH", "off")
    with pytest.raises(GpuInvalidArgument, match="CTHREADS_BATCH='off'"):
        batching_enabled()
    clean_env.setenv("CTHREADS_CACHE_DIR", "/elsewhere")
    assert cache_dir() == "/elsewhere"


class _FakeAdapter:
    def __init__(self, name, kind):
        self.info = {"device": name, "backend_type": "Vulkan", "adapter_type": kind}


def test_choose_adapter_prefers_real_gpu(clean_env):
    from cthreads.backend import device as dev

    cpu = _FakeAdapter("llvmpipe", "CPU")
    igpu = _FakeAdapter("Intel UHD", "IntegratedGPU")
    dgpu = _FakeAdapter("NVIDIA H200", "DiscreteGPU")
    assert dev.choose_adapter([cpu, igpu, dgpu]) is dgpu
    assert dev.choose_adapter([cpu, igpu]) is igpu
    clean_env.setenv("CTHREADS_ADAPTER", "llvm")
    assert dev.choose_adapter([cpu, igpu, dgpu]) is cpu
    with config.override(adapter="UHD"):
        assert dev.choose_adapter([cpu, igpu, dgpu]) is igpu
    with config.override(adapter="Radeon"):
        with pytest.raises(VulkanNoDevice, match="CTHREADS_ADAPTER='Radeon' matches no Vulkan "
                                                 "adapter; available: 'llvmpipe', 'Intel UHD'"):
            dev.choose_adapter([cpu, igpu])
    with pytest.raises(VulkanNoDevice):
        dev.choose_adapter([])


def test_info_lists_the_settings_and_marks_bad_ones():
    from cthreads.diagnostics import _settings

    lines = _settings(parse(CTHREADS_COARSEN="2", CTHREADS_DEVICE_MEMORY="1K"))
    assert lines == [
        "settings:",
        "  CTHREADS_ADAPTER         (unset: the best-ranked adapter type)",
        "  CTHREADS_WORKGROUP_SIZE  (unset: the device's pick)",
        "  CTHREADS_COARSEN         2",
        "  CTHREADS_VEC             1",
        "  CTHREADS_BATCH           1",
        "  CTHREADS_NATIVE_ENCODER  1",
        "  CTHREADS_DEVICE_MEMORY   1,024 bytes",
        "  CTHREADS_CACHE_DIR       /home/someone/.cache/cthreads",
        "  CTHREADS_HIDE_FEATURES   (unset: none hidden)",
        "  CTHREADS_DEVICE_COPIES   1 (unset)",
        "  CTHREADS_FULL_TRACEBACK  0",
        "  CTHREADS_DUMP_WGSL       (unset: no dump)",
        "  CTHREADS_AXIS_REDUCE     (unset: r3 on CPU drivers, r2 on GPUs)",
        "  CTHREADS_SORT            (unset: 8-bit digits on GPUs, 4-bit on CPU drivers)",
        "  CTHREADS_SCAN            (unset: the fast form on GPUs)",
        "  CTHREADS_CHECK_FORM      branch (unset or branch)",
        "  CTHREADS_LAUNCH_PATH     (unset: repeated launches keep their bind groups)",
        "  CTHREADS_MATMUL_CPU      (unset: the lanes form on CPU drivers)",
        "  CTHREADS_REDUCE_FORM     (unset: one pass on GPUs)",
        "  CTHREADS_SCRATCH         (unset: pending scratch back to the pool)",
        "  CTHREADS_KEEP_FED        (unset: heavy GPU dispatches gather while one runs)",
        "  CTHREADS_INDEX_FORM      (unset: N-D row lengths read once per invocation)",
    ]
    bad = _settings(parse(CTHREADS_VEC="on"))
    assert "  CTHREADS_VEC             NOT ACCEPTED (below)" in bad
    assert bad[-1] == "  error: CTHREADS_VEC='on': use 0 (off) or 1 (on, the default), or unset it"
    assert parse(CTHREADS_SCAN="Old").scan == "old"
    bad = _settings(parse(CTHREADS_SCAN="fast"))
    assert bad[-1] == "  error: CTHREADS_SCAN='fast': use old or new or lookback, or unset it"
    assert parse(CTHREADS_CHECK_FORM="Select").check_form == "select"
    bad = _settings(parse(CTHREADS_CHECK_FORM="atomic"))
    assert bad[-1] == ("  error: CTHREADS_CHECK_FORM='atomic': use branch or select, "
                       "or unset it")
    assert parse(CTHREADS_LAUNCH_PATH="Old").launch_path == "old"
    assert parse().launch_path == ""
    bad = _settings(parse(CTHREADS_LAUNCH_PATH="new"))
    assert bad[-1] == "  error: CTHREADS_LAUNCH_PATH='new': use old, or unset it"
    assert parse(CTHREADS_MATMUL_CPU="OLD").matmul_cpu == "old"
    bad = _settings(parse(CTHREADS_MATMUL_CPU="new"))
    assert bad[-1] == "  error: CTHREADS_MATMUL_CPU='new': use old, or unset it"
    assert parse(CTHREADS_INDEX_FORM="Old").index_form == "old"
    assert parse().index_form == ""
    bad = _settings(parse(CTHREADS_INDEX_FORM="new"))
    assert bad[-1] == "  error: CTHREADS_INDEX_FORM='new': use old, or unset it"


def test_override_only_fields_are_switched_by_override_and_checked():
    assert (config.current().shader_bounds_checks, config.current().trusted_shaders_on_cpu) \
        == (True, False)
    with config.override(trusted_shaders_on_cpu=True, shader_bounds_checks=False) as cfg:
        assert config.current() is cfg
        assert (cfg.trusted_shaders_on_cpu, cfg.shader_bounds_checks) == (True, False)
    assert config.current().trusted_shaders_on_cpu is False
    with pytest.raises(GpuInvalidArgument, match="trusted_shaders_on_cpu=1"):
        config.current().replace(trusted_shaders_on_cpu=1)
