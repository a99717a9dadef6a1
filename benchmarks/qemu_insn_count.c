/* A QEMU TCG plugin counting the guest instructions a qemu-user process executes (Debian 12's
 * qemu-user 7.2 runs plugins, -plugin or $QEMU_PLUGIN, but ships none: this is QEMU's own
 * tests/plugin/insn.c idea in a few lines). At exit it prints "guest instructions: N" to stderr.
 * Every translated block adds its instruction count inline when it runs; the add is not atomic,
 * so count single-threaded work (pi5_estimate.py forces one decode thread).
 *
 * Plugin API version 1 (QEMU 4.2-8.x). The few declarations are written out here so that no QEMU
 * source is needed; they are qemu-plugin.h's.
 *
 *   cc -shared -fPIC -O2 -o libinsn_count.so benchmarks/qemu_insn_count.c
 *   qemu-aarch64 -plugin ./libinsn_count.so PROGRAM ...
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

static uint64_t instructions;

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &instructions,
                                             qemu_plugin_tb_n_insns(tb));
}

static void finished(qemu_plugin_id_t id, void *opaque) {
    (void)id;
    (void)opaque;
    fprintf(stderr, "guest instructions: %" PRIu64 "\n", instructions);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    (void)info;
    (void)argc;
    (void)argv;
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    qemu_plugin_register_atexit_cb(id, finished, NULL);
    return 0;
}
