// bcuda sampe: the two .sai of pairs to BAM (bwa sampe 0.7.17's records). As nf-core's bwa/sampe:
// tuple(meta, [reads_1, reads_2], [sai_1, sai_2]), the index folder; emits a BAM (SAM when
// ext.args gives sampe's -o INT, which takes the -o of the output file) and versions.yml. The
// read group is @RG ID and SM of meta.id unless ext.args gives -r; ext.args: sampe's options.
process BCUDA_SAMPE {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"
    container 'bcuda:0.1.0'

    input:
    tuple val(meta), path(reads), path(sai)
    tuple val(meta2), path(index)

    output:
    tuple val(meta), path("*.{bam,sam}"), emit: bam
    path "versions.yml"           , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args   = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def rg     = args.contains('-r ') ? '' : "-r '@RG\\tID:${meta.id}\\tSM:${meta.id}'"
    def out    = args =~ /(^|\s)-o\s/ ? "-f ${prefix}.sam" : "-o ${prefix}.bam"
    """
    INDEX=\$(find -L ./ -name "*.amb" | sed 's/\\.amb\$//')
    bcuda sampe $args $rg -t $task.cpus $out \$INDEX $sai $reads

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        bcuda: \$(bcuda --version | sed 's/^bcuda //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    touch ${prefix}.bam
    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        bcuda: \$(bcuda --version | sed 's/^bcuda //')
    END_VERSIONS
    """
}
