/* planner.c -- the pure planner's entry point: the decision table of docs/planner.md, row by row. Each
 * row's work is in a file of its own (planner_<concern>.c); the rules behind the rows are in docs/rules.md.
 */
#include "planner_internal.h"

/* Rows 2b and 4 to 10, once every member record carries this leader's epoch. */
static void planner_decide(struct planner *c)
{
    if (c->spec->suspend) { /* row 2b */
        planner_suspend(c);
        return;
    }
    planner_scale_up(c); /* row 4 */
    planner_repairs(c);  /* rows 5, 6 */
    bool live = false, unclear = false, unresolved = false, decided = false, dead_start = false;
    for (size_t i = 0; i < c->n; i++) {
        live |= c->m[i].live;
        unclear |= c->m[i].unclear;
        unresolved |= c->m[i].unresolved;
        decided |= c->m[i].decided;
        dead_start |= c->m[i].dead_start;
    }
    /* Row 6b. Not even the admin's force-seed goes ahead while a start may still run on a dead node (F4). */
    if (c->in->force_seed && planner_force_seed(c, unresolved || decided || dead_start))
        return;
    if (live) { /* rows 7, 8 */
        planner_running_cluster(c);
        return;
    }
    if (unclear || unresolved || decided || dead_start) { /* row 9 */
        planner_recovery_blocked(c);
        return;
    }
    planner_recovery(c); /* row 10 */
}

int rss_planner_plan(const struct rss_plan_input *in, struct rss_plan *out, rss_error_t *err)
{
    memset(out, 0, sizeof(*out));
    out->set_replicas = -1;
    struct planner c = {.out = out};
    int r = planner_setup(&c, in, err);
    if (r >= 0) {
        out->epoch_claims = planner_epoch_claims(&c); /* row 1 */
        planner_load(&c);
        if (!c.spec->paused) { /* row 2: paused is status only; the release-hold annotation waits too */
            planner_hold_release(&c);
            out->fencing = planner_fence(&c); /* row 3, and the retraction of starts on dead nodes */
            if (!out->fencing)
                out->retracting = planner_retract(&c);
            if (!out->fencing && !out->retracting) {
                planner_decide(&c);
                planner_labels(&c);
            }
        }
        if (!c.spec->paused) {
            planner_hold_persist(&c); /* patches only: planner_finish orders them */
            planner_pin_persist(&c);
        }
        planner_finish(&c);
    }
    planner_teardown(&c);
    return r;
}
