// bcuda samse: .sai to BAM (bwa samse 0.7.17's records). As nf-core's bwa/samse:
// tuple(meta, reads, sai), the index folder; emits a BAM and versions.yml. The read group
// is @RG ID and SM of meta.id unless ext.args gives -r; ext.args: samse's options.
process BCUDA_SAMSE {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"
    container 'bcuda:0.1.0'

    input:
    tuple val(meta), path(reads), path(sai)
    tuple val(meta2), path(index)

    output:
    tuple val(meta), path("*.bam"), emit: bam
    path "versions.yml"           , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args   = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def rg     = args.contains('-r ') ? '' : "-r '@RG\\tID:${meta.id}\\tSM:${meta.id}'"
    """
    INDEX=\$(find -L ./ -name "*.amb" | sed 's/\\.amb\$//')
    bcuda samse $args $rg -o ${prefix}.bam \$INDEX $sai $reads

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
